// Starts `tlparse-build proxy` for the browser tests (cross-origin.test.js,
// proxy-cross-origin.test.js).
import { spawn } from 'node:child_process';
import readline from 'node:readline';

/**
 * Runs `BIN proxy UPSTREAM --port 0 ...args`; resolves to {url, close()} once it prints its URL
 * (`url` without a trailing slash); rejects if it exits first or prints nothing for 60 s.
 */
export function startProxy(bin, upstreamUrl, args) {
  const child = spawn(bin, ['proxy', upstreamUrl, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`proxy printed no URL: ${lines.join('\n')}`)); }, 60_000);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`proxy exited (${code}): ${lines.join('\n')}`)); });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const proxying = /^Proxying .* at (http:\/\/\S+?)\/? \(Ctrl-C to stop\)$/.exec(line);
      if (!proxying) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ url: proxying[1], close: () => child.kill() });
    });
  });
}
