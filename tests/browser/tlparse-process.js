// Starts `tlparse-build serve` and `tlparse-build proxy` for the browser tests
// (cross-origin.test.js, proxy-cross-origin.test.js), and waits for the URL they print.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

/**
 * Runs `BIN serve DIR --port 0 --no-open ...args`; resolves to {url, stdout, close()} once it
 * prints the URL it serves (`url` with its trailing slash).
 */
export function startServe(bin, dir, args) {
  return startUntilUrl(bin, ['serve', dir, '--port', '0', '--no-open', ...args], {
    name: 'serve',
    banner: /^Serving .* at (http:\/\/\S+) \(Ctrl-C to stop\)$/,
    env: { ...process.env, TLPARSE_NO_BROWSER: '1' },
  });
}

/**
 * Runs `BIN proxy UPSTREAM --port 0 ...args`; resolves to {url, stdout, close()} once it prints
 * its URL (`url` without a trailing slash).
 */
export function startProxy(bin, upstreamUrl, args) {
  return startUntilUrl(bin, ['proxy', upstreamUrl, '--port', '0', ...args], {
    name: 'proxy',
    banner: /^Proxying .* at (http:\/\/\S+?)\/? \(Ctrl-C to stop\)$/,
  });
}

/**
 * Runs `bin args` (in `env`, if given); resolves to {url, stdout, close()} once a line of its
 * stdout matches `banner`, whose first group is the URL; rejects if it exits first or prints no
 * such line for 60 s.
 */
function startUntilUrl(bin, args, { name, banner, env }) {
  const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`${name} printed no URL: ${lines.join('\n')}`)); }, 60_000);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${name} exited (${code}): ${lines.join('\n')}`)); });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const started = banner.exec(line);
      if (!started) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ url: started[1], stdout: lines.join('\n'), close: () => child.kill() });
    });
  });
}
