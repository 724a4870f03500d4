/**
 * Command-line credential forms (src/capture/command-credentials.ts) through
 * the whole pipeline: what is a secret only because of the command around it,
 * and the look-alikes that are not.
 */
import { describe, expect, it } from 'vitest';
import { COMMAND_FAMILIES } from '../../../src/capture/command-families.js';
import { ENV_CREDENTIAL_NAME_RE, commandCredentialRanges } from '../../../src/capture/command-credentials.js';
import { SECRET_MARKER as M, isCredentialKey, redactText, redactValue } from '../../../src/capture/redact.js';

const cases: Array<[string, string]> = [
  // the tracker's forms
  ['mysql -h db -u root -pS3cr3t-pw app', `mysql -h db -u root -p${M} app`],
  ['curl -u deploy:S3cr3t-pw https://ci/api', `curl -u deploy:${M} https://ci/api`],
  ['./deploy --password S3cr3t-pw --env prod', `./deploy --password ${M} --env prod`],
  ['sync --token tok-123456 --path kv', `sync --token ${M} --path kv`],
  ['MY_DB_PW=S3cr3t-pw ./migrate', `MY_DB_PW=${M} ./migrate`],
  // attached, quoted, =, clusters, proxies
  ["mariadb -p'two words' -e 'select 1'", `mariadb -p'${M}' -e 'select 1'`],
  ['/usr/bin/mysqldump -uroot -pS3cr3t --all-databases', `/usr/bin/mysqldump -uroot -p${M} --all-databases`],
  ['curl --user=ops:S3cr3t https://x', `curl --user=ops:${M} https://x`],
  ['curl -sSu ops:S3cr3t https://x', `curl -sSu ops:${M} https://x`],
  ['curl -U proxy:S3cr3t -x p:3128 https://x', `curl -U proxy:${M} -x p:3128 https://x`],
  ['curl -u "ops:two words" https://x', `curl -u "ops:${M}" https://x`],
  ['app --db-password "two words" run', `app --db-password "${M}" run`],
  ['app --client-secret=abc123 --api-key xyz789', `app --client-secret=${M} --api-key ${M}`],
  ['curl --oauth2-bearer tok123 https://x', `curl --oauth2-bearer ${M} https://x`],
  ['influx -username admin -password S3cr3t', `influx -username admin -password ${M}`],
  // scoped families
  ['sshpass -p S3cr3t ssh host', `sshpass -p ${M} ssh host`],
  ['redis-cli -h cache -a S3cr3t ping', `redis-cli -h cache -a ${M} ping`],
  ['mongosh -u admin -p S3cr3t', `mongosh -u admin -p ${M}`],
  ['docker login -u bot -p S3cr3t registry', `docker login -u bot -p ${M} registry`],
  ['az login -u me -p S3cr3t', `az login -u me -p ${M}`],
  ['sqlcmd -S db -U sa -P S3cr3t', `sqlcmd -S db -U sa -P ${M}`],
  ['ldapsearch -x -D cn=admin -w S3cr3t -b dc=x', `ldapsearch -x -D cn=admin -w ${M} -b dc=x`],
  ['zip -P S3cr3t -r a.zip d/', `zip -P ${M} -r a.zip d/`],
  ['7z a -pS3cr3t a.7z d/', `7z a -p${M} a.7z d/`],
  ['openssl enc -pass pass:S3cr3t -in a', `openssl enc -pass pass:${M} -in a`],
  ['openssl rsa -passin pass:S3cr3t -in k', `openssl rsa -passin pass:${M} -in k`],
  ['keytool -list -storepass S3cr3t -keystore k.jks', `keytool -list -storepass ${M} -keystore k.jks`],
  ['lftp -u deploy,S3cr3t sftp://h', `lftp -u deploy,${M} sftp://h`],
  ['smbclient //h/s -U admin%S3cr3t', `smbclient //h/s -U admin%${M}`],
  // environment-style names
  ['export SMTP_PASS=S3cr3t', `export SMTP_PASS=${M}`],
  ['DEPLOY_KEY=abc123 make', `DEPLOY_KEY=${M} make`],
  ['REDIS_PWD="two words" redis-server', `REDIS_PWD="${M}" redis-server`],
  ['{"APP_CREDS": "abc123"}', `{"APP_CREDS": "${M}"}`],
];

const untouched = [
  'ssh -p 22 host',
  'mkdir -p a/b',
  'docker run -p 8080:80 nginx',
  'docker login registry.internal && docker run -p 80:80 app',
  'mysql -u root -p',
  'mysql -u root -p app_db',
  'curl -u deploy https://ci/api',
  'docker exec -u 1000:1000 app id',
  'openssl rsa -passin env:KEY_PASS -in k',
  'openssl rsa -passin file:/run/pass -in k',
  'psql --no-password -h db app',
  'docker login --password-stdin registry',
  'app --password-file /run/secrets/db --token-file /run/t',
  'python run.py --max-tokens 4096',
  'ffmpeg -i a.mp4 -pass 1 -f null /dev/null',
  'docker build --secret id=npm,src=.npmrc .',
  'mysql -p"$MYSQL_PASSWORD" app',
  'curl -u "$CI_USER:$CI_TOKEN" https://x',
  'app --password "${DB_PASSWORD}"',
  'PWD=/tmp OLDPWD=/var ls',
  'my_db_pw=lower-case-is-not-env-style',
  'git push -u origin main',
];

describe('command-line credentials', () => {
  for (const [input, expected] of cases) {
    it(input, () => {
      expect(redactText(input, { pii: false })).toBe(expected);
      expect(redactText(expected, { pii: false })).toBe(expected);
    });
  }

  for (const input of untouched) {
    it(`leaves alone: ${input}`, () => {
      expect(redactText(input, { pii: false })).toBe(input);
      expect(commandCredentialRanges(input)).toEqual([]);
    });
  }

  it('reads JSON-encoded text (a tool result): escapes end lines, escaped quotes quote', () => {
    const encoded = JSON.stringify({ output: 'ok\nmysql -pS3cr3t db\nssh -p 22 h\nMY_DB_PW=abc\n--token tok1', cfg: '{"MY_DB_PW": "abc"}' });
    const out = redactText(encoded, { pii: false });
    expect(out).not.toMatch(/S3cr3t|abc|tok1/);
    expect(out).toContain('ssh -p 22 h');
    expect(out).toContain(`\\"MY_DB_PW\\": \\"${M}\\"`);
  });

  it('scopes a command to its own segment (line, ;, |, &&, subshell)', () => {
    expect(redactText('mysql -h db; ls -pfoo', { pii: false })).toBe('mysql -h db; ls -pfoo');
    expect(redactText('echo x | mysql -pS3cr3t', { pii: false })).toBe(`echo x | mysql -p${M}`);
    expect(redactText('out=$(mysql -pS3cr3t -e "select 1")', { pii: false })).toBe(`out=$(mysql -p${M} -e "select 1")`);
  });

  it('every family names at least one command and one option', () => {
    for (const f of COMMAND_FAMILIES) {
      expect(f.commands.length, f.name).toBeGreaterThan(0);
      expect(f.options.length, f.name).toBeGreaterThan(0);
      for (const o of f.options) expect(o.attached === true || o.separate === true, `${f.name} ${o.flag}`).toBe(true);
    }
  });

  it('environment-style credential names also mark object keys', () => {
    expect(ENV_CREDENTIAL_NAME_RE.test('MY_DB_PW')).toBe(true);
    expect(ENV_CREDENTIAL_NAME_RE.test('PWD')).toBe(false);
    expect(isCredentialKey('SMTP_PASS')).toBe(true);
    expect(redactValue({ env: { MY_DB_PW: 'plain-looking', HOME: '/srv' } })).toEqual({ env: { MY_DB_PW: M, HOME: '/srv' } });
  });
});
