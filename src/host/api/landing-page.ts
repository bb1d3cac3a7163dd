/**
 * The page at `/`: where the startup url `http://HOST:PORT/#token=…` lands. It takes the token from the
 * fragment (which never reaches a server or its logs), keeps it in sessionStorage, removes it from the
 * address bar, and lists the environments and their processes from the operator API. The full
 * dashboard is not this page; this one shows that the url and the token work.
 */
export const LANDING_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>exec-rx host</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:60em}code,pre{background:#f4f4f4;padding:.1em .3em}td,th{padding:.2em .8em;text-align:left}</style>
</head>
<body>
<h1>exec-rx host</h1>
<p>The operator API is at <code>/api/v1</code>; its OpenAPI document is <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.
Send the operator token as <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<p id="status">No token: open the url the host printed at start (it ends in <code>#token=…</code>).</p>
<table id="environments"></table>
<script>
(function () {
  var match = /(?:^|&)token=([^&]+)/.exec(location.hash.slice(1));
  if (match) {
    sessionStorage.setItem('exec-rx-token', decodeURIComponent(match[1]));
    history.replaceState(null, '', location.pathname);
  }
  var token = sessionStorage.getItem('exec-rx-token');
  if (!token) return;
  var status = document.getElementById('status');
  status.textContent = 'Loading environments…';
  fetch('/api/v1/environments', { headers: { Authorization: 'Bearer ' + token } })
    .then(function (r) { return r.ok ? r.json() : Promise.reject(new Error('HTTP ' + r.status)); })
    .then(function (body) {
      status.textContent = body.environments.length + ' environment(s) on host ' + body.hostInstance;
      var table = document.getElementById('environments');
      var head = table.insertRow();
      ['id', 'generation', 'state', 'processes'].forEach(function (h) { var th = document.createElement('th'); th.textContent = h; head.appendChild(th); });
      body.environments.forEach(function (e) {
        var row = table.insertRow();
        [e.id, e.generation, e.state + (e.error ? ' (' + e.error.message + ')' : ''), e.processCount].forEach(function (v) { row.insertCell().textContent = String(v); });
      });
    })
    .catch(function (error) { status.textContent = 'The operator API refused the token: ' + error.message; });
})();
</script>
</body>
</html>
`;
