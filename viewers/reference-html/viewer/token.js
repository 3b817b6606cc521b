// token.js: the form asking for the bearer token of a bundle server that answered 401 with
// `WWW-Authenticate: Bearer` (`tlparse-build proxy --token-file`). Loaded only on that path.
// The token never goes in the page's URL (it would reach the viewer host's logs and the
// history): it is kept in sessionStorage under the bundle's origin (a reload of this tab still
// works; closing the tab forgets it), and app.js sends it only to that origin. Text only (dom.js).

import { h } from './dom.js';

/**
 * The form. `origin`: the bundle's origin; `refused`: the server refused the token last given;
 * `onToken(token)` is called with what was typed.
 */
export function tokenForm(origin, { refused = false, onToken }) {
  const input = h('input', {
    type: 'password', name: 'token', required: true, autocomplete: 'off', spellcheck: 'false',
    'aria-label': `Token for ${origin}`, 'aria-invalid': refused ? 'true' : null,
  });
  const form = h('form', {
    class: 'token-form', 'aria-label': 'Bundle server token',
    on: {
      submit: (e) => {
        e.preventDefault();
        const token = input.value.trim();
        if (token) onToken(token);
      },
    },
  },
  h('h2', null, 'This bundle server needs a token'),
  h('p', null, h('code', null, origin), ' answered 401 (Unauthorized) and asks for a bearer token.'),
  refused ? h('p', { class: 'token-refused', role: 'alert' }, 'The server refused this token. Check it and try again.') : null,
  h('div', { class: 'token-row' }, input, h('button', { type: 'submit' }, 'Open')),
  h('p', { class: 'note' },
    'The token is sent only to ', h('code', null, origin), ', as an ', h('code', null, 'Authorization'),
    ' header. It is kept in this tab (sessionStorage) until the tab is closed, and never put in the page\'s address.'),
  origin.startsWith('http:') && !/^http:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(origin)
    ? h('p', { class: 'note' }, 'This server is reached over plain HTTP: the token crosses the network unencrypted.')
    : null);
  queueMicrotask(() => input.focus());
  return form;
}
