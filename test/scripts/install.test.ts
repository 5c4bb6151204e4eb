import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * scripts/install.sh run into a scratch root (DESTDIR) with a passwd file of its own, so the user
 * is made there and nothing of this machine changes; then what it wrote is checked, the installed
 * program is started from there and stopped with SIGTERM, the install is run again as an upgrade,
 * and uninstalled. The unit is checked with systemd-analyze (verify, and security offline).
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const INSTALL = path.join(ROOT, 'scripts', 'install.sh');
const UNIT = path.join(ROOT, 'systemd', 'cropwalk.service');

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasUseradd = spawnSync('useradd', ['--help'], { stdio: 'ignore' }).status === 0;
const hasAnalyze = spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0;

function install(root: string, args: string[] = []) {
  const r = spawnSync('bash', [INSTALL, '--node-modules-from', path.join(ROOT, 'node_modules'), ...args], {
    env: { ...process.env, DESTDIR: root },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

function scratchRoot(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'cropwalk-root-'));
  mkdirSync(path.join(root, 'etc'));
  writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\ndialout:x:20:\n');
  writeFileSync(path.join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o640 });
  writeFileSync(path.join(root, 'etc/gshadow'), 'root:*::\n', { mode: 0o640 });
  return root;
}

const mode = (p: string) => statSync(p).mode & 0o7777;

const noAnalyze = hasAnalyze ? false : 'systemd-analyze is missing (apt-get install systemd): the unit is not checked here';
t.test('the unit passes systemd-analyze verify and security with exposure 4.0 or lower', { skip: noAnalyze }, async (t) => {
  const verify = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' });
  t.equal(verify.status, 0, verify.stderr);
  t.equal(verify.stderr.trim(), '', 'no warning about any line of the unit');
  const sec = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', UNIT], { encoding: 'utf8' });
  const m = /Overall exposure level for cropwalk\.service: (\d+\.\d)/.exec(sec.stdout);
  t.ok(m, `an exposure figure in:\n${sec.stdout.slice(-500)}${sec.stderr}`);
  const exposure = Number(m?.[1]);
  t.ok(exposure <= 4.0, `exposure ${exposure} <= 4.0`);
  // The same bound as systemd checks it (its threshold is the exposure times ten).
  t.equal(spawnSync('systemd-analyze', ['security', '--offline=true', '--threshold=40', UNIT], { stdio: 'ignore' }).status, 0);
  const text = readFileSync(UNIT, 'utf8');
  for (const line of [
    'NoNewPrivileges=yes',
    'ProtectSystem=strict',
    'ReadWritePaths=/var/lib/cropwalk',
    'ProtectHome=yes',
    'PrivateTmp=yes',
    'Restart=on-failure',
  ]) {
    t.match(text, new RegExp(`^${line.replace(/[/.]/g, '\\$&')}$`, 'm'), line);
  }
  t.match(text, /^RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX$/m);
  t.match(text, /^MemoryMax=\d+%$/m);
  t.notMatch(text, /^MemoryDenyWriteExecute=/m, "not set: V8's JIT needs writable code");
});

const noRoot = isRoot && hasUseradd ? false : 'needs root and useradd (the installer makes a system user in the scratch root)';
t.test('install into a scratch root, start the program from there, upgrade, uninstall', { skip: noRoot }, async (t) => {
  const root = scratchRoot();
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const first = install(root);
  t.equal(first.code, 0, first.out);
  t.match(first.out, /the admin token is in \/var\/lib\/cropwalk\/admin-token/);

  const passwd = readFileSync(path.join(root, 'etc/passwd'), 'utf8');
  const user = /^cropwalk:x:(\d+):(\d+):[^:]*:\/var\/lib\/cropwalk:\/usr\/sbin\/nologin$/m.exec(passwd);
  t.ok(user, `a system user cropwalk in the root's passwd:\n${passwd}`);
  const uid = Number(user?.[1]);
  t.ok(uid < 1000, 'a system uid');

  const data = path.join(root, 'var/lib/cropwalk');
  t.equal(mode(data), 0o750);
  t.equal(statSync(data).uid, uid, 'the data folder belongs to the user');
  const env = path.join(root, 'etc/cropwalk/cropwalk.env');
  t.equal(mode(env), 0o640, 'the settings file is 0640');
  t.equal(statSync(env).uid, 0);
  t.equal(statSync(env).gid, Number(user?.[2]), 'readable by the service group');
  t.match(readFileSync(env, 'utf8'), /^PORT=8080$/m);

  const unit = readFileSync(path.join(root, 'etc/systemd/system/cropwalk.service'), 'utf8');
  t.match(unit, /^ExecStart=\/\S*node --import tsx src\/main\.ts$/m);
  t.match(unit, /^WorkingDirectory=\/opt\/cropwalk$/m);
  const wants = path.join(root, 'etc/systemd/system/multi-user.target.wants/cropwalk.service');
  t.ok(lstatSync(wants).isSymbolicLink(), 'enabled');
  t.match(readlinkSync(wants), /\/etc\/systemd\/system\/cropwalk\.service$/);
  const wrapper = readFileSync(path.join(root, 'usr/local/bin/cropwalk'), 'utf8');
  t.match(wrapper, /runuser -u cropwalk -- \S+ \/opt\/cropwalk\/scripts\/cropwalk\.mjs/);
  t.equal(mode(path.join(root, 'usr/local/bin/cropwalk')), 0o755);

  const prefix = path.join(root, 'opt/cropwalk');
  for (const f of [
    'package.json',
    'src/main.ts',
    'scripts/cropwalk.mjs',
    'systemd/cropwalk.service',
    'node_modules/.package-lock.json',
    // Built by the installer: the service cannot build it under ProtectSystem=strict.
    'web/dist/index.html',
  ]) {
    t.ok(existsSync(path.join(prefix, f)), `${f} installed`);
  }
  t.notOk(existsSync(path.join(prefix, '.git')), 'no history copied');

  // The installed program runs from there, logs JSON lines with a level, and stops on SIGTERM.
  const run = await runService(prefix, data);
  t.equal(run.code, 0, `exit 0 after SIGTERM:\n${run.lines.slice(-5).join('\n')}`);
  t.ok(run.stopMs < 20_000, `stopped in ${Math.round(run.stopMs)} ms, within STOP_TIMEOUT_MS`);
  const parsed = run.lines.map((l) => JSON.parse(l) as { level: string; msg: string });
  t.ok(
    parsed.every((l) => ['debug', 'info', 'warn', 'error'].includes(l.level)),
    'every line is JSON with a level',
  );
  t.ok(
    parsed.some((l) => l.msg === 'cropwalk listening'),
    'it listened',
  );
  t.ok(
    parsed.some((l) => l.msg === 'stopped'),
    'and said it stopped',
  );
  t.ok(existsSync(path.join(data, 'cropwalk.sqlite')), 'its database is in the data folder');
  t.ok(existsSync(path.join(data, 'admin-token')), 'with the admin token made at first start');
  t.notOk(existsSync(path.join(data, 'cropwalk.pid')), 'and no pid file left behind');
  const db = readFileSync(path.join(data, 'cropwalk.sqlite'));

  // Again, as an upgrade: the data and the settings stay, a file the new version lacks goes.
  writeFileSync(env, readFileSync(env, 'utf8') + 'SCALE_PORT=/dev/ttyUSB0\n');
  writeFileSync(path.join(prefix, 'src/gone-in-this-version.ts'), 'export {};\n');
  const second = install(root);
  t.equal(second.code, 0, second.out);
  t.match(second.out, /keeping the settings in \/etc\/cropwalk\/cropwalk\.env/);
  t.match(second.out, /upgraded in place/);
  t.match(readFileSync(env, 'utf8'), /^SCALE_PORT=\/dev\/ttyUSB0$/m, 'settings kept');
  t.equal(mode(env), 0o640);
  t.same(readFileSync(path.join(data, 'cropwalk.sqlite')), db, 'data kept');
  t.notOk(existsSync(path.join(prefix, 'src/gone-in-this-version.ts')), 'the program is replaced whole');
  t.equal(readFileSync(path.join(root, 'etc/passwd'), 'utf8').match(/^cropwalk:/gm)?.length, 1, 'one user, not two');

  // Uninstall keeps the data and settings; --purge removes them and the user.
  const un = install(root, ['--uninstall']);
  t.equal(un.code, 0, un.out);
  t.notOk(existsSync(prefix), 'program removed');
  t.notOk(existsSync(path.join(root, 'etc/systemd/system/cropwalk.service')), 'unit removed');
  t.notOk(existsSync(wants), 'no longer enabled');
  t.ok(existsSync(path.join(data, 'cropwalk.sqlite')), 'data kept');
  t.ok(existsSync(env), 'settings kept');
  const purge = install(root, ['--uninstall', '--purge']);
  t.equal(purge.code, 0, purge.out);
  t.notOk(existsSync(data), 'data removed on --purge');
  t.notOk(existsSync(path.join(root, 'etc/cropwalk')), 'settings removed on --purge');
  t.notMatch(readFileSync(path.join(root, 'etc/passwd'), 'utf8'), /^cropwalk:/m, 'user removed on --purge');
});

/**
 * `--no-start` on a box where systemd runs. systemd does not run in the test container (nor in
 * CI), so this is the one place with a stand-in: `systemctl` is a recorder on PATH, and what is
 * checked of it is which commands the installer gives. Everything else is the real installer on
 * the real paths, without DESTDIR, in a private mount namespace whose /etc, /var, /usr/local and
 * /run are overlays on a scratch folder: the user is made by useradd in /etc/passwd, added to
 * dialout, and the files land where they would on a box, and nothing of this machine changes.
 */
const LIVE_DIRS = ['etc', 'var', 'usr/local', 'run'];

function namespaceProblem(): string | false {
  if (!isRoot || !hasUseradd) return 'needs root and useradd';
  const scratch = mkdtempSync(path.join(tmpdir(), 'cropwalk-ns-'));
  try {
    const r = spawnSync(
      'unshare',
      ['--mount', '--propagation', 'private', 'bash', '-c', overlayScript(scratch) + 'test -d /run/systemd/system'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    return r.status === 0 ? false : `no private mount namespace with overlays here (unshare --mount, overlayfs): ${r.stderr.trim()}`;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Overlays LIVE_DIRS on `scratch`/up (kept between runs, so a second run sees the first one's box). */
function overlayScript(scratch: string): string {
  return (
    'set -e\n' +
    LIVE_DIRS.map((d) => {
      const up = path.join(scratch, 'up', d);
      const work = path.join(scratch, 'work', d);
      return `mkdir -p ${up} ${work}\nmount -t overlay overlay -o lowerdir=/${d},upperdir=${up},workdir=${work} /${d}\n`;
    }).join('') +
    // What the installer takes as "systemd is running" (sd_booted does the same).
    'mkdir -p /run/systemd/system\n'
  );
}

function liveInstall(scratch: string, prefix: string, args: string[]) {
  const bin = path.join(scratch, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    path.join(bin, 'systemctl'),
    [
      '#!/bin/sh',
      'echo "$*" >> "$SYSTEMCTL_LOG"',
      'case "$1" in',
      '  is-active) [ -e "$SCRATCH/active" ]; exit $? ;;',
      '  stop) [ -e "$OLD_FILE" ] && echo "(the old program was still in place)" >> "$SYSTEMCTL_LOG"; rm -f "$SCRATCH/active" ;;',
      '  start|restart) touch "$SCRATCH/active" ;;',
      'esac',
      'exit 0',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const command = `${overlayScript(scratch)}exec bash "$@"`;
  const r = spawnSync(
    'unshare',
    ['--mount', '--propagation', 'private', 'bash', '-c', command, 'install', INSTALL, '--prefix', prefix, ...args],
    {
      env: {
        ...process.env,
        DESTDIR: '',
        PATH: `${bin}:${process.env.PATH}`,
        SCRATCH: scratch,
        SYSTEMCTL_LOG: path.join(scratch, 'systemctl.log'),
        OLD_FILE: path.join(prefix, 'src/gone-in-this-version.ts'),
      },
      encoding: 'utf8',
      timeout: 180_000,
    },
  );
  return { code: r.status, out: r.stdout + r.stderr };
}

const noNamespace = namespaceProblem();
t.test(
  '--no-start where systemd runs: installed and enabled, never started; an upgrade stops the service first',
  { skip: noNamespace },
  async (t) => {
    const scratch = mkdtempSync(path.join(tmpdir(), 'cropwalk-live-'));
    t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
    const prefix = path.join(scratch, 'opt', 'cropwalk');
    const up = (p: string) => path.join(scratch, 'up', p);
    const calls = () => readFileSync(path.join(scratch, 'systemctl.log'), 'utf8').trim().split('\n');
    const modules = ['--node-modules-from', path.join(ROOT, 'node_modules')];

    const first = liveInstall(scratch, prefix, [...modules, '--no-start']);
    t.equal(first.code, 0, first.out);
    t.notMatch(first.out, /systemd is not running here/, 'it took systemd as running');
    t.same(
      calls().filter((c) => !c.startsWith('is-active')),
      ['daemon-reload', 'enable cropwalk.service'],
      'the unit is loaded and enabled; nothing is started',
    );
    t.match(first.out, /not started \(--no-start\): sudo systemctl start cropwalk/);
    t.notOk(existsSync(path.join(scratch, 'active')));

    // What it wrote, on the box's own paths.
    const user = /^cropwalk:x:(\d+):(\d+):[^:]*:\/var\/lib\/cropwalk:\/usr\/sbin\/nologin$/m.exec(readFileSync(up('etc/passwd'), 'utf8'));
    t.ok(user, 'the system user, made by useradd in /etc/passwd');
    t.match(readFileSync(up('etc/group'), 'utf8'), /^dialout:x:\d+:(\S+,)?cropwalk(,\S+)?$/m, 'in the group dialout, for the scale');
    t.equal(statSync(up('var/lib/cropwalk')).uid, Number(user?.[1]), 'the data folder belongs to the user');
    t.equal(mode(up('var/lib/cropwalk')), 0o750);
    t.equal(mode(up('etc/cropwalk/cropwalk.env')), 0o640);
    const unit = readFileSync(up('etc/systemd/system/cropwalk.service'), 'utf8');
    t.match(unit, new RegExp(`^WorkingDirectory=${prefix.replace(/[/.]/g, '\\$&')}$`, 'm'), 'the unit runs the program from --prefix');
    t.ok(existsSync(path.join(prefix, 'src/main.ts')), 'the program installed under --prefix');
    t.ok(existsSync(up('usr/local/bin/cropwalk')), 'the cropwalk command');

    // The service runs (started by hand); an upgrade with --no-start stops it before it replaces the
    // program under it, and leaves it stopped.
    writeFileSync(path.join(scratch, 'active'), '');
    writeFileSync(path.join(prefix, 'src/gone-in-this-version.ts'), 'export {};\n');
    writeFileSync(path.join(scratch, 'systemctl.log'), '');
    const second = liveInstall(scratch, prefix, [...modules, '--no-start']);
    t.equal(second.code, 0, second.out);
    t.same(
      calls(),
      [
        'is-active --quiet cropwalk.service',
        'stop cropwalk.service',
        '(the old program was still in place)',
        'daemon-reload',
        'enable cropwalk.service',
      ],
      'stopped while the old program was still there, then never started',
    );
    t.notOk(existsSync(path.join(prefix, 'src/gone-in-this-version.ts')), 'the program replaced');
    t.notOk(existsSync(path.join(scratch, 'active')), 'left stopped');
    t.match(second.out, /upgraded in place/);
    t.match(second.out, /not started \(--no-start\)/);
  },
);

t.test('bad options are refused', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'cropwalk-root-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const [args, why] of [
    [['--bogus'], /unknown option --bogus/],
    [['--prefix', 'relative/dir'], /--prefix must be an absolute path/],
    [['--purge'], /--purge goes with --uninstall/],
  ] as const) {
    const r = install(root, [...args]);
    t.equal(r.code, 1, args.join(' '));
    t.match(r.out, why);
  }
});

function runService(prefix: string, dataDir: string): Promise<{ code: number | null; lines: string[]; stopMs: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: prefix,
      env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ADMIN_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let sentAt = 0;
    const kill = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!sentAt && out.includes('"cropwalk listening"')) {
        sentAt = performance.now();
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(kill);
      const lines = out.split('\n').filter(Boolean);
      if (!sentAt) return reject(new Error(`the service never listened:\n${out}\n${err}`));
      resolve({ code, lines, stopMs: performance.now() - sentAt });
    });
  });
}
