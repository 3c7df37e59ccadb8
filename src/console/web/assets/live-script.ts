/**
 * /assets/console.js: the console's only script. On a page marked data-live it listens to the
 * server's events (/live) and, when something changed, fetches the same page again and swaps
 * its #live section in place: the operator sees new sales, alarms and machines going offline
 * without a reload, and a half-typed search stays as it is. It also prints (the pick list's
 * button) and reads a file picked for a planogram import into the import's text box.
 */
export const CONSOLE_JS = `'use strict';
(function () {
  // A print button (the pick list) and a file picked for an import, read into its text box.
  document.querySelectorAll('[data-print]').forEach(function (b) {
    b.addEventListener('click', function () { window.print(); });
  });
  document.querySelectorAll('input[type=file][data-fills]').forEach(function (input) {
    input.addEventListener('change', function () {
      var file = input.files && input.files[0];
      var box = document.getElementById(input.dataset.fills);
      if (!file || !box) return;
      file.text().then(function (text) {
        box.value = text;
        var format = input.form && input.form.querySelector('select[name=format]');
        if (format) format.value = /\\.json$/i.test(file.name) ? 'json' : 'csv';
      });
    });
  });
})();
(function () {
  if (document.body.dataset.live !== '1' || typeof EventSource === 'undefined') return;
  var pending = false;
  function refresh() {
    pending = false;
    fetch(location.href, { credentials: 'same-origin', headers: { 'X-Console-Live': '1' } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        if (text === null) return;
        var next = new DOMParser().parseFromString(text, 'text/html').getElementById('live');
        var here = document.getElementById('live');
        if (next && here) here.replaceWith(document.adoptNode(next));
        document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || '0') + 1);
      })
      .catch(function () {});
  }
  var source = new EventSource('/live');
  source.addEventListener('changed', function () {
    if (pending) return;
    pending = true;
    setTimeout(refresh, 300);
  });
})();
`;
