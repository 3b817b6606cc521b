// boot.js: the first script of the page, a classic one in index.html's head, so it runs before
// the first paint and before any other script. It narrows the page's Content-Security-Policy to
// connections to this page's origin and the bundles the URL names (`?bundle=`, `?compare=`):
// index.html's own policy cannot name them in advance, so it allows any http(s) origin and this
// one, added as a second policy, narrows it (a browser enforces every policy of a page, and a
// policy added later can only take away). Nothing the page runs afterwards, even a script slipped
// in through a trace string, can then send the bundle's contents anywhere else. It also applies
// the saved theme (no flash), and opened from file:// (where browsers refuse ES modules and
// reads of the files next to the page) it shows instructions instead of a blank page.
(function () {
  var params = new URLSearchParams(location.search);
  var origins = [];
  ['bundle', 'compare'].forEach(function (name) {
    var given = params.get(name);
    if (!given) return;
    var url;
    try { url = new URL(given, location.href); } catch (e) { return; }
    // Only a plain http(s) origin goes into the policy: a host holding `;` or `,` could add
    // directives. Anything else stays unreachable, and the viewer says it could not open it.
    if (/^https?:\/\/[A-Za-z0-9.-]+(:\d+)?$/.test(url.origin) && url.origin !== location.origin &&
        origins.indexOf(url.origin) < 0) origins.push(url.origin);
  });
  var policy = document.createElement('meta');
  policy.httpEquiv = 'Content-Security-Policy';
  policy.content = "connect-src 'self'" + origins.map(function (o) { return ' ' + o; }).join('');
  document.head.appendChild(policy);

  var theme = null;
  try { theme = localStorage.getItem('tlparse-theme'); } catch (e) { /* storage disabled */ }
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  if (location.protocol === 'file:') {
    document.addEventListener('DOMContentLoaded', function () {
      document.getElementById('app').hidden = true;
      document.getElementById('file-protocol').hidden = false;
    });
  }
})();
