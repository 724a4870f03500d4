/** The command families whose options carry a credential (data for `command-family-scan.ts`: extend here). */

/** One option of a command family whose value is (or ends with) a credential. */
export interface CredentialOption {
  /** the option as typed: `-p`, `--user`, `-storepass` */
  readonly flag: string;
  /** the value glued to the option: `-pPW`, `--user=ops:PW` (then `flag` ends with `=`) */
  readonly attached?: boolean;
  /** the value is the next word: `-p PW` (a short flag may also end a cluster: `-sSu ops:PW`) */
  readonly separate?: boolean;
  /** the value is `user<sep>secret`: only what follows the first separator is secret */
  readonly userSeparator?: ':' | ',' | '%';
  /** the value is `<prefix>secret` (openssl `pass:`): other values (`env:NAME`, `file:…`) are references */
  readonly valuePrefix?: string;
}

/** Commands that take a credential as the value of some option. */
export interface CommandFamily {
  readonly name: string;
  readonly commands: readonly string[];
  /** the family applies only once this word follows the command (`docker … login`) */
  readonly subcommand?: string;
  readonly options: readonly CredentialOption[];
}

const MYSQL_COMMANDS = [
  'mysql',
  'mysqldump',
  'mysqladmin',
  'mysqlimport',
  'mysqlshow',
  'mysqlcheck',
  'mysqlpump',
  'mysqlslap',
  'mysqlbinlog',
  'mysqlsh',
  'mariadb',
  'mariadb-dump',
  'mariadb-admin',
  'mariadb-import',
  'mariadb-show',
  'mariadb-check',
  'mariadb-slap',
  'mariadb-binlog',
];

const userPass = (sep: ':' | ',' | '%', ...flags: string[]): CredentialOption[] =>
  flags.flatMap((flag) => [
    { flag, separate: true, userSeparator: sep },
    { flag: flag.startsWith('--') ? `${flag}=` : flag, attached: true, userSeparator: sep },
  ]);

/** The command families and their credential options (data: extend here). */
export const COMMAND_FAMILIES: readonly CommandFamily[] = [
  // `-p` takes no separate value in the MySQL clients (`-p db` prompts, and `db` is the database)
  { name: 'mysql', commands: MYSQL_COMMANDS, options: [{ flag: '-p', attached: true }] },
  { name: 'sshpass', commands: ['sshpass'], options: [{ flag: '-p', attached: true, separate: true }] },
  { name: 'curl', commands: ['curl'], options: userPass(':', '-u', '--user', '-U', '--proxy-user') },
  { name: 'redis', commands: ['redis-cli', 'redis-benchmark'], options: [{ flag: '-a', separate: true }] },
  {
    name: 'mongodb',
    commands: ['mongo', 'mongosh', 'mongodump', 'mongorestore', 'mongoexport', 'mongoimport', 'mongostat', 'mongotop', 'mongofiles'],
    options: [{ flag: '-p', attached: true, separate: true }],
  },
  {
    name: 'registry login',
    commands: ['docker', 'podman', 'nerdctl', 'buildah', 'skopeo', 'helm', 'oras', 'crane', 'regctl', 'az'],
    subcommand: 'login',
    options: [{ flag: '-p', attached: true, separate: true }],
  },
  { name: 'sql server', commands: ['sqlcmd', 'bcp', 'osql', 'isql'], options: [{ flag: '-P', attached: true, separate: true }] },
  {
    name: 'ldap',
    commands: ['ldapsearch', 'ldapadd', 'ldapmodify', 'ldapdelete', 'ldappasswd', 'ldapwhoami', 'ldapcompare', 'ldapmodrdn'],
    options: [{ flag: '-w', separate: true }],
  },
  { name: 'zip', commands: ['zip', 'unzip', 'zipcloak'], options: [{ flag: '-P', separate: true }] },
  { name: '7z', commands: ['7z', '7za', '7zr', '7zz', 'rar', 'unrar'], options: [{ flag: '-p', attached: true }] },
  {
    name: 'openssl',
    commands: ['openssl'],
    options: [
      { flag: '-k', separate: true },
      { flag: '-pass', separate: true, valuePrefix: 'pass:' },
      { flag: '-passin', separate: true, valuePrefix: 'pass:' },
      { flag: '-passout', separate: true, valuePrefix: 'pass:' },
    ],
  },
  {
    name: 'java keystores',
    commands: ['keytool', 'jarsigner'],
    options: ['-storepass', '-keypass', '-srcstorepass', '-deststorepass', '-srckeypass', '-destkeypass', '-new'].map((flag) => ({ flag, separate: true })),
  },
  { name: 'lftp', commands: ['lftp'], options: userPass(',', '-u', '--user') },
  { name: 'samba', commands: ['smbclient', 'rpcclient', 'smbcacls', 'smbget'], options: userPass('%', '-U', '--user') },
];
