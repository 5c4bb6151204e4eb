#!/usr/bin/env node
// Runs before `npm start`, `npm test` and `npm run bench`: installs what is
// missing on a fresh machine and says what it does. Plain JavaScript on
// purpose: it must run before the TypeScript tooling is installed.
import { existsSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const purpose = process.argv[2] ?? 'start';
const say = (msg) => process.stderr.write(`[setup] ${msg}\n`);

function run(cmd, args, env = {}) {
  say(`running: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) {
    say(`failed: ${cmd} ${args.join(' ')} (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

function has(cmd) {
  return spawnSync(cmd, ['-version'], { stdio: 'ignore' }).status === 0;
}

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 12)) {
  say(`Node ${process.versions.node} is too old: cropwalk needs Node 20.12 or newer.`);
  process.exit(1);
}

// 1. Node modules: install when missing or older than the lock file.
const lock = path.join(root, 'package-lock.json');
const marker = path.join(root, 'node_modules', '.package-lock.json');
const stale = !existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs + 1000);
if (stale) {
  say('node modules are missing or out of date: installing them (better-sqlite3 builds from source once, about two minutes)');
  // onnxruntime-node's install script would download CUDA binaries; its CPU binaries ship in the package.
  // package.json's allowScripts denies that script (npm 11.16+); the variable covers older npm.
  run('npm', [existsSync(lock) ? 'ci' : 'install', '--no-audit', '--no-fund'], { ONNXRUNTIME_NODE_INSTALL: 'skip' });
}

// 2. The native SQLite binding must load on this Node.
const require = createRequire(path.join(root, 'package.json'));
try {
  const Database = require('better-sqlite3');
  new Database(':memory:').close();
} catch (err) {
  say(`better-sqlite3 does not load (${err.message.split('\n')[0]}): rebuilding it`);
  run('npm', ['rebuild', 'better-sqlite3']);
}

// 3. ffmpeg for scoring: FFMPEG_PATH, else ffmpeg-static if installed, else the system's ffmpeg.
const ffmpeg = process.env.FFMPEG_PATH;
if (ffmpeg ? !existsSync(ffmpeg) : !has('ffmpeg') || !has('ffprobe')) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0) {
    say('ffmpeg is missing: installing the Debian package ffmpeg (provides ffmpeg and ffprobe)');
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'ffmpeg'], { DEBIAN_FRONTEND: 'noninteractive' });
  } else if (purpose === 'test') {
    say(
      'ffmpeg is missing and cannot be installed here (needs root and apt-get): install the ffmpeg package, or set FFMPEG_PATH and FFPROBE_PATH.',
    );
    process.exit(1);
  } else {
    say(
      'ffmpeg is missing: the API runs, but walk scoring reports itself unavailable in /api/health until ffmpeg is installed (apt-get install ffmpeg) or FFMPEG_PATH is set.',
    );
  }
}

// 4. For the tests only: real ICC profiles (Adobe RGB, sRGB v2 and v4) that the photo colour tests
// read; without them those tests skip and say so.
const profiles = ['/usr/share/color/icc/colord/AdobeRGB1998.icc', '/usr/share/color/icc/sRGB.icc'];
if (purpose === 'test' && !profiles.every((f) => existsSync(f))) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0) {
    say('ICC profiles for the colour tests are missing: installing the Debian packages colord-data and icc-profiles-free');
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'colord-data', 'icc-profiles-free'], {
      DEBIAN_FRONTEND: 'noninteractive',
    });
  } else {
    say('ICC profiles for the colour tests are missing (apt-get install colord-data icc-profiles-free): those tests will skip.');
  }
}

// 5. The staff app (web/): built into web/dist when missing or older than its sources, so that
// `npm start` serves it with no network (the build is git-ignored).
try {
  const { ensureWebBuild } = await import('./build-web.mjs');
  ensureWebBuild({ say });
} catch (err) {
  say(`the staff app did not build (${err.message}): the API runs, and / answers that the app is not built.`);
  if (purpose === 'test') process.exit(1);
}

// 6. For the tests only: Debian's Chromium, which the staff app's browser tests drive (test/web/);
// without it those tests skip and say so.
if (purpose === 'test' && !existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium')) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0) {
    say('Chromium for the browser tests is missing: installing the Debian package chromium');
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium', 'fonts-dejavu-core'], {
      DEBIAN_FRONTEND: 'noninteractive',
    });
  } else {
    say('Chromium is missing (apt-get install chromium): the browser tests will skip.');
  }
}

// 7. For the tests only: socat (the scale tests read a real pty pair), systemd's systemd-analyze
// (the unit's verify and security checks), curl and jq (test/readme.test.ts runs the README's
// examples as a reader pastes them); without them those tests skip and say so.
const testTools = [
  ['socat', ['-V'], 'socat'],
  ['systemd-analyze', ['--version'], 'systemd'],
  ['curl', ['--version'], 'curl'],
  ['jq', ['--version'], 'jq'],
].filter(([cmd, args]) => spawnSync(cmd, args, { stdio: 'ignore' }).status !== 0);
if (purpose === 'test' && testTools.length) {
  const packages = testTools.map(([, , pkg]) => pkg);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0) {
    say(`for the scale, service-unit and README tests: installing the Debian packages ${packages.join(' ')}`);
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { DEBIAN_FRONTEND: 'noninteractive' });
  } else {
    say(`${packages.join(' and ')} missing (apt-get install ${packages.join(' ')}): the scale, service-unit or README tests will skip.`);
  }
}

// 8. For the tests only: the training stack (training/, Python on Debian's torch) that the pipeline's
// smoke test and the learning-loop test run; without it those tests skip and say so. Debian's packages,
// never PyPI: the box and CI reach apt and npm only.
const trainingPython = process.env.CROPWALK_PYTHON ?? '/usr/bin/python3';
const hasTrainingStack = () =>
  spawnSync(trainingPython, ['-c', 'import torch, torchvision, onnx, PIL, numpy'], { stdio: 'ignore' }).status === 0;
if (purpose === 'test' && !hasTrainingStack()) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0) {
    say('the training stack is missing: installing the Debian packages python3-torch, python3-torchvision, python3-onnx, python3-pil');
    run('apt-get', ['update', '-qq']);
    run(
      'apt-get',
      ['install', '-y', '-qq', '--no-install-recommends', 'python3-torch', 'python3-torchvision', 'python3-onnx', 'python3-pil'],
      {
        DEBIAN_FRONTEND: 'noninteractive',
      },
    );
  } else {
    say(
      'the training stack is missing (apt-get install python3-torch python3-torchvision python3-onnx python3-pil): the training tests will skip.',
    );
  }
}

// 9. For the tests only: PostgreSQL, which the second pass of `npm test` runs the API tests on
// (scripts/test.mjs starts a throwaway server of its own; nothing is configured system-wide).
// Debian's package brings initdb and pg_ctl; without it that pass skips and says so.
if (purpose === 'test' && !process.env.CROPWALK_TEST_POSTGRES) {
  const { findPgBin } = await import('./pg-cluster.mjs');
  if (!findPgBin()) {
    const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    if (isRoot && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0) {
      say('PostgreSQL for the second test pass is missing: installing the Debian package postgresql');
      run('apt-get', ['update', '-qq']);
      run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'postgresql'], { DEBIAN_FRONTEND: 'noninteractive' });
    } else {
      say('PostgreSQL is missing (apt-get install postgresql): the PostgreSQL pass of the tests will skip.');
    }
  }
}

say(`ready for ${purpose}`);
