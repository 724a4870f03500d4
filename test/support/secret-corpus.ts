/**
 * The planted-secret corpus and the ordinary-command corpus of the redaction
 * tests (unit: test/unit/capture/secret-corpus.test.ts; fault suite:
 * test/faults/secret-corpus.test.ts).
 *
 * Every secret is fake but format-valid, and built at test time from a seeded
 * generator and split prefixes, so no live-looking key sits in the source for
 * a push-protection scanner to choke on, and every run plants the same bytes.
 *
 * Each planted secret is one line, `kNN <carrier>`: the `kNN` tag survives
 * redaction (so a test can prove the line reached the output) and `secret` is
 * the material that must not.
 */

export interface PlantedSecret {
  /** `kNN`, unique, the first word of `line` */
  readonly id: string;
  /**
   * The rule family the plant exercises: `secretlint:<rule>` for a rule of the
   * secretlint recommended preset, `cli:<form>` for a command-line credential
   * form, `pipeline:<rule>` for the pipeline's own shapes.
   */
  readonly family: string;
  /** One line of text carrying the secret (no newline unless the form is multi-line, such as PEM) */
  readonly line: string;
  /** The secret material; no run of 10 of its characters may reach any output */
  readonly secret: string;
  /** Only as a whole string (the secretlint GCP rule reads a whole service-account JSON document) */
  readonly standalone?: boolean;
}

/** Deterministic generator (xorshift32) so the corpus is the same bytes every run. */
function generator(seed: number): (n: number, alphabet: string) => string {
  let x = seed >>> 0 || 1;
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  return (n, alphabet) => {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet.charAt(next() % alphabet.length);
    return s;
  };
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = '0123456789abcdef';
const B64 = ALNUM + '+/';
const URLSAFE = ALNUM + '_-';
/** Password characters: no quotes, backslashes or spaces, so every encoding on the way out keeps them verbatim. */
const PW = ALNUM + '!#%^*_-.,~';

/** Join parts so no token prefix appears whole in this file. */
const j = (...parts: string[]): string => parts.join('');

function base64Json(obj: Record<string, unknown>): string {
  // Pad the JSON so its base64 ends `fQ==` (the closing brace alone in the last quantum).
  let json = JSON.stringify(obj);
  while (json.length % 3 !== 1) json = json.replace('{', '{ ');
  return Buffer.from(json, 'utf8').toString('base64');
}

function pemBody(r: ReturnType<typeof generator>, magic: string, lines: number): string {
  const out: string[] = [];
  let first = magic + r(64 - magic.length, B64);
  out.push(first);
  for (let i = 1; i < lines; i++) out.push(r(64, B64));
  first = out.join('\n');
  return first;
}

/** The ≥ 60 planted secrets, every family of the secretlint recommended preset and every command-line form. */
export function plantedSecrets(): PlantedSecret[] {
  const r = generator(0x5eed);
  const pw = (n = 16) => r(1, UPPER) + r(n - 2, PW) + r(1, DIGITS);
  const out: Omit<PlantedSecret, 'id'>[] = [];
  const add = (family: string, carrier: (s: string) => string, secret: string) => out.push({ family, line: carrier(secret), secret });

  // --- secretlint: aws (secret access keys; key ids are the pipeline's own AWS rule, below)
  add('secretlint:aws', (s) => `AWS_SECRET_ACCESS_KEY="${s}" aws s3 ls`, r(40, B64));
  add('secretlint:aws', (s) => `{"aws_secret_access_key": "${s}"}`, r(40, B64));
  add('secretlint:aws', (s) => `aws_secret_access_key = ${s}`, r(40, B64));
  // --- secretlint: gcp (a whole service-account key file)
  {
    const key = `-----BEGIN PRIVATE KEY-----\n${pemBody(r, 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 6)}\n-----END PRIVATE KEY-----\n`;
    // the tag rides inside the document: `{KEY_ID}` is replaced by the plant's id below
    const doc = JSON.stringify({
      type: 'service_account',
      project_id: 'proj-{KEY_ID}',
      private_key_id: r(40, HEX),
      private_key: key,
      client_email: 'svc@proj.iam.gserviceaccount.com',
    });
    out.push({ family: 'secretlint:gcp', line: doc, secret: key.split('\n')[2]!, standalone: true });
  }
  // --- secretlint: privatekey (PEM, raw newlines and JSON-escaped newlines)
  {
    const body = pemBody(r, 'MIIEowIBAAKCAQEA', 6);
    out.push({
      family: 'secretlint:privatekey',
      line: `cat <<EOF > id_rsa\n-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----\nEOF`,
      secret: body.split('\n')[2]!,
    });
    const ossh = pemBody(r, 'b3BlbnNzaC1rZXktdjEAAAAA', 5);
    add('secretlint:privatekey', (s) => `key: "-----BEGIN OPENSSH PRIVATE KEY-----\\n${s.split('\n').join('\\n')}\\n-----END OPENSSH PRIVATE KEY-----"`, ossh);
  }
  // --- secretlint: npm
  add('secretlint:npm', (s) => `NPM_CONFIG_USERCONFIG=/dev/null npm publish --registry x ${s}`, j('np', 'm_') + r(36, ALNUM));
  add('secretlint:npm', (s) => `echo "//registry.npmjs.org/:_authToken=${s}" >> .npmrc`, `${r(8, HEX)}-${r(4, HEX)}-${r(4, HEX)}-${r(4, HEX)}-${r(12, HEX)}`);
  add('secretlint:npm', (s) => `"repository": "git+https://${s}:x-oauth-basic@github.com/org/pkg.git"`, r(40, HEX));
  // --- secretlint: basicauth
  add('secretlint:basicauth', (s) => `git remote add origin https://deployer:${s}@git.corp-fake.dev/team/app.git`, r(18, ALNUM + '_-'));
  add('secretlint:basicauth', (s) => `ftp://mirror:${s}@files.corp-fake.dev/pub`, r(14, ALNUM));
  // --- secretlint: slack
  add('secretlint:slack', (s) => `SLACK_BOT=${s} node bot.js`, j('xo', 'xb-') + `${r(12, DIGITS)}-${r(13, DIGITS)}-${r(24, ALNUM)}`);
  add(
    'secretlint:slack',
    (s) => `curl -X POST -d '{"text":"hi"}' ${s}`,
    j('https://hooks.sl', 'ack.com/services/T') + `${r(10, UPPER + DIGITS)}/B${r(10, UPPER + DIGITS)}/${r(24, ALNUM)}`,
  );
  add('secretlint:slack', (s) => `app token ${s}`, j('xa', 'pp-') + `1-${r(11, UPPER + DIGITS)}-${r(13, DIGITS)}-${r(64, HEX)}`);
  // --- secretlint: sendgrid
  add(
    'secretlint:sendgrid',
    (s) => `sendgrid-cli send --key ${s} --to ops`,
    j('S', 'G.') + `${r(22, URLSAFE.replace('-', ''))}.${r(43, URLSAFE.replace('-', ''))}`,
  );
  add('secretlint:sendgrid', (s) => `{"mail": {"apiKeyId": "${s}"}}`, j('S', 'G.') + `${r(22, ALNUM)}.${r(43, ALNUM)}`);
  // --- secretlint: shopify
  add('secretlint:shopify', (s) => `X-Shopify-Access: ${s}`, j('shp', 'at_') + r(32, HEX));
  add('secretlint:shopify', (s) => `shared ${s}`, j('shp', 'ss_') + r(32, HEX));
  // --- secretlint: github
  add('secretlint:github', (s) => `git push https://github.com/org/repo ${s}`, j('gh', 'p_') + r(36, ALNUM));
  add('secretlint:github', (s) => `gh auth login --with-token <<< ${s}`, j('gh', 'o_') + r(36, ALNUM));
  add('secretlint:github', (s) => `GH_PAT_FINE: ${s}`, j('github', '_pat_') + r(82, ALNUM + '_'));
  // --- secretlint: gitlab
  add('secretlint:gitlab', (s) => `glab auth login --stdin < ${s}`, j('glp', 'at-') + r(20, URLSAFE));
  // --- secretlint: grafana
  add('secretlint:grafana', (s) => `grafana cloud ${s}`, j('gl', 'c_') + r(48, ALNUM) + '==');
  add('secretlint:grafana', (s) => `service account ${s}`, j('gl', 'sa_') + r(32, ALNUM) + '_' + r(8, HEX));
  // --- secretlint: openai
  add('secretlint:openai', (s) => `client = OpenAI(api=${s})`, j('sk-', 'proj-') + r(74, URLSAFE) + j('T3Blbk', 'FJ') + r(74, URLSAFE));
  add('secretlint:openai', (s) => `legacy ${s}`, 'sk-' + r(20, ALNUM) + j('T3Blbk', 'FJ') + r(20, ALNUM));
  // --- secretlint: anthropic
  add('secretlint:anthropic', (s) => `anthropic messages create ${s}`, j('sk-', 'ant-', 'api03-') + r(93, URLSAFE) + 'AA');
  // --- secretlint: groq
  add('secretlint:groq', (s) => `groq chat ${s}`, j('gs', 'k_') + r(52, ALNUM));
  // --- secretlint: huggingface
  add('secretlint:huggingface', (s) => `huggingface-cli login ${s}`, j('h', 'f_') + r(34, UPPER + LOWER));
  // --- secretlint: linear
  add('secretlint:linear', (s) => `linear issue list ${s}`, j('lin', '_api_') + r(40, ALNUM));
  // --- secretlint: notion
  add('secretlint:notion', (s) => `notion sync ${s}`, j('nt', 'n_') + r(11, DIGITS) + r(35, ALNUM));
  // --- secretlint: 1password
  add(
    'secretlint:1password',
    (s) => `op signin ${s}`,
    j('op', 's_') +
      base64Json({
        email: `${r(12, LOWER)}@1passwordserviceaccounts.lcl`,
        secretKey: `A3-${r(6, UPPER + DIGITS)}-${r(6, UPPER + DIGITS)}-${r(5, UPPER + DIGITS)}`,
        srpX: r(64, HEX),
        signInAddress: 'fake.b5local.com:4000',
      }),
  );
  // --- secretlint: database-connection-string
  add('secretlint:database-connection-string', (s) => `mongosh "mongodb+srv://app:${s}@cluster0.fake-db.net/prod"`, pw(18));
  add('secretlint:database-connection-string', (s) => `DATABASE_URL=postgresql://svc:${s}@db.internal:5432/app?sslmode=require`, pw(18));
  add('secretlint:database-connection-string', (s) => `jdbc:mysql://reporting:${s}@mysql.internal:3306/sales`, r(16, ALNUM));
  // --- secretlint: hashicorp-vault
  add('secretlint:hashicorp-vault', (s) => `vault login ${s}`, j('hv', 's.') + r(94, URLSAFE));
  add('secretlint:hashicorp-vault', (s) => `batch ${s}`, j('hv', 'b.') + r(140, URLSAFE));
  // --- secretlint: vercel
  add('secretlint:vercel', (s) => `vercel deploy --prod ${s}`, j('vc', 'p_') + r(24, ALNUM));
  // --- secretlint: databricks
  add('secretlint:databricks', (s) => `databricks configure ${s}`, j('da', 'pi') + r(32, HEX));
  // --- secretlint: docker
  add('secretlint:docker', (s) => `echo ${s} | docker login --password-stdin`, j('dckr', '_pat_') + r(27, URLSAFE));
  // --- secretlint: figma
  add('secretlint:figma', (s) => `figma export ${s}`, j('fi', 'gd_') + r(40, URLSAFE));

  // --- command-line credential forms (the tracker's six first)
  add('cli:mysql-p', (s) => `mysql -h db.internal -u root -p${s} app`, pw());
  add('cli:curl-u', (s) => `curl -u deploy:${s} https://ci.internal/api/builds`, pw());
  add('cli:long-flag', (s) => `./deploy.sh --password ${s} --env prod`, pw());
  add('cli:long-flag', (s) => `vault-sync --token ${s} --path kv/app`, r(26, ALNUM));
  add('cli:env-assignment', (s) => `MY_DB_PW=${s} ./migrate up`, pw());
  add('cli:mysql-p', (s) => `mysqldump -uroot -p${s} --all-databases > all.sql`, pw());
  add('cli:mysql-p', (s) => `mariadb -p'${s}' -e 'show databases'`, pw());
  add('cli:curl-u', (s) => `curl --user "ops:${s}" https://ci.internal/api`, pw());
  add('cli:curl-u', (s) => `curl -x proxy.internal:3128 -U proxyuser:${s} https://pkg.internal/`, pw());
  add('cli:curl-u', (s) => `curl -sS -uadmin:${s} http://127.0.0.1:9200/_cat/indices`, pw());
  add('cli:long-flag', (s) => `backup --passwd ${s} /srv`, pw());
  add('cli:long-flag', (s) => `kubectl-plugin --secret ${s} apply`, pw());
  add('cli:long-flag', (s) => `translate --api-key ${s} --lang de`, r(32, ALNUM));
  add('cli:long-flag', (s) => `oauth-cli --client-secret ${s} --client-id app`, r(32, ALNUM));
  add('cli:long-flag', (s) => `wget --http-password ${s} https://files.internal/a.tgz`, pw());
  add('cli:long-flag', (s) => `influx -username admin -password ${s} -execute 'show dbs'`, pw());
  add('cli:long-flag', (s) => `dbctl --db-password "${s} with space" migrate`, pw());
  add('cli:env-assignment', (s) => `export SMTP_PASS=${s}`, pw());
  add('cli:env-assignment', (s) => `DEPLOY_KEY=${s} make release`, r(32, ALNUM));
  add('cli:env-assignment', (s) => `REDIS_PWD=${s} redis-server`, pw());
  add('cli:scoped', (s) => `sshpass -p ${s} ssh deploy@bastion`, pw());
  add('cli:scoped', (s) => `redis-cli -h cache.internal -a ${s} ping`, pw());
  add('cli:scoped', (s) => `mongosh -u admin -p ${s} --authenticationDatabase admin`, pw());
  add('cli:scoped', (s) => `docker login -u ci-bot -p ${s} registry.internal`, pw());
  add('cli:scoped', (s) => `sqlcmd -S db.internal -U sa -P ${s} -Q "select 1"`, pw());
  add('cli:scoped', (s) => `zip -P ${s} -r backup.zip data/`, pw());
  add('cli:scoped', (s) => `7z a -p${s} -mhe=on vault.7z docs/`, pw());
  add('cli:scoped', (s) => `openssl enc -aes-256-cbc -pass pass:${s} -in a.txt -out a.enc`, pw());
  add('cli:scoped', (s) => `keytool -genkeypair -alias app -storepass ${s} -keystore ks.jks`, pw());
  add('cli:scoped', (s) => `lftp -u deploy,${s} sftp://files.internal`, pw());
  add('cli:scoped', (s) => `smbclient //files/share -U admin%${s}`, pw());

  // --- the pipeline's own shapes (AEP-0003 §9.4 floor and its hardening)
  add('pipeline:aws-key-id', (s) => `aws configure set aws_access_key_id ${s}`, j('AS', 'IA') + r(16, UPPER + DIGITS));
  add('pipeline:aws-key-id', (s) => `export AWS_ACCESS_KEY_ID=${s}`, j('A3', 'T') + r(17, UPPER + DIGITS));
  add('pipeline:assignment', (s) => `PGPASSWORD=${s} psql -h db.internal app`, pw());
  add('pipeline:bearer', (s) => `curl -H "Authorization: Bearer ${s}" https://api.internal/v1`, r(40, ALNUM + '._-'));
  add('pipeline:jwt', (s) => `cookie session=${s}`, `eyJ${r(30, URLSAFE)}.eyJ${r(40, URLSAFE)}.${r(43, URLSAFE)}`);
  add('pipeline:token-shape', (s) => `stripe charges list --api ${s}`, j('sk', '_live_') + r(24, ALNUM));
  add('pipeline:token-shape', (s) => `gcloud maps ${s}`, j('AI', 'za') + r(35, URLSAFE));
  add('pipeline:url-credentials', (s) => `git clone https://oauth2:${s}@gitlab.internal/g/r.git`, r(24, ALNUM));
  add('pipeline:header', (s) => `curl -H 'x-api-key: ${s}' https://api.internal`, r(32, ALNUM));

  // --- secretlint rules new in preset 13 (appended, so every earlier plant keeps its id and bytes)
  add('secretlint:stripe', (s) => `STRIPE_API_KEY=${s} node billing.js`, j('rk', '_live_') + r(32, ALNUM));
  add('secretlint:stripe', (s) => `stripe listen --api-key ${s}`, j('sk', '_test_') + r(99, ALNUM));
  add('secretlint:cloudflare', (s) => `wrangler deploy # token ${s}`, j('cf', 'ut_') + r(40, ALNUM) + r(8, HEX));
  add('secretlint:cloudflare', (s) => `{"cloudflare": "${s}"}`, j('cf', 'k_') + r(40, ALNUM) + r(8, HEX));
  add('secretlint:tailscale', (s) => `tailscale up --auth-key=${s}`, j('tsk', 'ey-') + `auth-${r(12, ALNUM)}-${r(32, ALNUM)}`);
  add('secretlint:tailscale', (s) => `TS_API_KEY=${s}`, j('tsk', 'ey-') + `api-${r(10, ALNUM)}-${r(40, ALNUM + '_')}`);

  return out.map((p, i) => {
    const id = `k${String(i + 1).padStart(2, '0')}`;
    return { ...p, id, line: p.standalone === true ? p.line.replace('{KEY_ID}', id) : `${id} ${p.line}` };
  });
}

/**
 * Ordinary commands and text that carry no secret: every one must come out of
 * the pipeline byte for byte (none has a home path, an email or a phone
 * number, which are rules of their own).
 */
export const ORDINARY_COMMANDS: readonly string[] = [
  'git log -p --stat -n 5',
  'ls -la',
  'grep -rn token src/',
  'grep -r password docs/ | wc -l',
  'npm run build',
  'npm token list',
  'docker run -p 8080:80 nginx:1.27',
  'docker run -d -p 127.0.0.1:5432:5432 -e POSTGRES_DB=app postgres:16',
  'docker exec -u 1000:1000 app sh -c "id"',
  'ssh -p 22 deploy@bastion',
  'scp -P 2222 build.tgz deploy@bastion:/srv/releases/',
  'rsync -avz -e "ssh -p 2222" dist/ deploy@bastion:/srv/app/',
  'mkdir -p build/out',
  'curl -u deploy https://ci.internal/api/builds',
  'curl -sS -H "Accept: application/json" http://localhost:8080/health',
  'curl -X POST -d \'{"name":"x"}\' http://localhost:8080/api/items',
  'mysql -u root -p',
  'mysql -u root -p app_db',
  'psql -h localhost -p 5432 -U app app_db',
  'pg_dump -p 5432 app_db > dump.sql',
  'redis-cli -p 6379 ping',
  'mongosh --port 27017 --quiet',
  'git push -u origin main',
  'sort -u names.txt',
  'journalctl -u nginx --since today',
  'ps -u root -o pid,cmd',
  'git show 3f2c1a9b8e7d6c5b4a39281706f5e4d3c2b1a098',
  'git checkout -b fix/token-refresh',
  'echo 550e8400-e29b-41d4-a716-446655440000',
  'sha256sum dist.tgz # e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'docker pull nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31',
  'kubectl get secrets -n prod',
  "kubectl get secret db-creds -o jsonpath='{.data.password}'",
  'gh secret list --repo org/app',
  "jq '.token' response.json",
  'cat /etc/passwd | cut -d: -f1',
  'MAX_TOKENS=4096 python run.py --max-tokens 4096',
  'NODE_ENV=production TOKEN_COUNT=5 node server.js',
  'AWS_PROFILE=dev aws s3 ls s3://bucket/path/',
  'SSH_AUTH_SOCK=/tmp/agent.sock ssh-add -l',
  'export PATH=$PATH:/usr/local/go/bin',
  'psql --no-password -h db.internal app_db',
  'docker login --password-stdin registry.internal',
  'app --password-file /run/secrets/db --token-file /run/secrets/token',
  'tokenizer --max-tokens 512 --vocab vocab.json',
  'openssl rand -hex 32',
  'ssh-keygen -t ed25519 -C "laptop" -f id_ed25519',
  'chmod 600 id_ed25519 && ls -l',
  'tar -xzf release.tar.gz -C /tmp/release',
  'find . -name "*.ts" -newer package.json',
  "sed -i 's/foo/bar/g' config.yaml",
  'python3 -m venv .venv && pip install -r requirements.txt',
  'cargo build --release && go test ./...',
  'make -j4 CFLAGS=-O2',
  'kill -9 12345',
  'git clone https://github.com/org/repo.git',
  'wget https://downloads.internal/file.tar.gz',
  'ffmpeg -i in.mp4 -pass 1 -f null /dev/null',
  'docker build --secret id=npm,src=.npmrc -t app .',
  'mysql -u root -p"$MYSQL_PASSWORD" app_db',
  'curl -u "$CI_USER:$CI_TOKEN" https://ci.internal/api',
  'app --password "${DB_PASSWORD}" --token "$API_TOKEN"',
  'aws secretsmanager get-secret-value --secret-id prod/db',
  'the bearer of good news',
];
