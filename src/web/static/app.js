// confvault web interface: progressive enhancement only (every page works without it). Loaded with defer; no inline script (CSP).
(function () {
  'use strict';
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || '';

  // Confirmation before destructive form submissions.
  document.addEventListener('submit', function (e) {
    var form = e.target;
    var msg = form.getAttribute && form.getAttribute('data-confirm');
    if (msg && !window.confirm(msg)) e.preventDefault();
  });

  // Long form operations (data-busy on the submit button): say what is happening and for how long, and
  // keep a second click from starting it twice. The page itself answers when the work is done.
  var busy = false;
  document.addEventListener('submit', function (e) {
    var btn = e.submitter;
    var text = btn && btn.getAttribute && btn.getAttribute('data-busy');
    if (!text || e.defaultPrevented) return;
    if (busy) {
      e.preventDefault();
      return;
    }
    busy = true;
    var note = document.createElement('span');
    note.className = 'busy';
    note.setAttribute('role', 'status');
    btn.insertAdjacentElement('afterend', note);
    var started = Date.now();
    var tick = function () {
      note.textContent = ' ' + text + '… ' + Math.round((Date.now() - started) / 1000) + ' s';
    };
    tick();
    setInterval(tick, 1000);
  });

  // A box that scrolls sideways (a wide table, a long line) can be scrolled with the keyboard: it takes focus.
  var scrollers = document.querySelectorAll('.table-wrap, pre');
  for (var i = 0; i < scrollers.length; i++) {
    if (scrollers[i].scrollWidth > scrollers[i].clientWidth + 1 && !scrollers[i].hasAttribute('tabindex')) scrollers[i].setAttribute('tabindex', '0');
  }

  // "All" in a list's header (data-select-all="NAME"): ticks or unticks every NAME box of its form.
  // Unticking one row unticks "All" (which, posted, would take the whole page).
  document.addEventListener('change', function (e) {
    var box = e.target;
    if (!box.form || box.type !== 'checkbox') return;
    var name = box.getAttribute('data-select-all');
    var i, boxes;
    if (name) {
      boxes = box.form.querySelectorAll('input[type="checkbox"][name="' + name + '"]');
      for (i = 0; i < boxes.length; i++) boxes[i].checked = box.checked;
      return;
    }
    var all = box.form.querySelector('input[data-select-all="' + box.name + '"]');
    if (!all) return;
    boxes = box.form.querySelectorAll('input[type="checkbox"][name="' + box.name + '"]');
    var every = true;
    for (i = 0; i < boxes.length; i++) every = every && boxes[i].checked;
    all.checked = every;
  });

  // Copy buttons: data-copy="#selector" of an input.
  document.addEventListener('click', function (e) {
    var btn = e.target.closest && e.target.closest('[data-copy]');
    if (!btn) return;
    var input = document.querySelector(btn.getAttribute('data-copy'));
    if (!input) return;
    var done = function () {
      btn.textContent = 'Copied';
      setTimeout(function () {
        btn.textContent = 'Copy';
      }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(input.value).then(done, function () {
        input.select();
        document.execCommand('copy');
        done();
      });
    } else {
      input.select();
      document.execCommand('copy');
      done();
    }
  });

  // The Add channel form: only the fieldsets of the chosen channel type (data-types) show and post; without script all show, each labelled.
  var channelType = document.getElementById('channel-type');
  function showChannelFields() {
    var sets = channelType.form.querySelectorAll('fieldset.channel-fields');
    for (var i = 0; i < sets.length; i++) {
      var off = sets[i].getAttribute('data-types').split(' ').indexOf(channelType.value) < 0;
      sets[i].hidden = off;
      sets[i].disabled = off;
    }
  }
  if (channelType) {
    channelType.addEventListener('change', showChannelFields);
    showChannelFields();
  }

  // Pages with a live part (data-refresh="seconds", the Jobs pages): fetch the page again and swap that part while
  // it asks for it; without script the page's Refresh link (or a reload) does the same.
  var live = document.getElementById('jobs-live');
  function refreshLive() {
    var every = live && live.getAttribute('data-refresh');
    if (!every) return;
    setTimeout(
      function () {
        fetch(window.location.href, { headers: { Accept: 'text/html' }, credentials: 'same-origin' })
          .then(function (r) {
            return r.ok ? r.text() : Promise.reject(new Error(String(r.status)));
          })
          .then(function (html) {
            var next = new DOMParser().parseFromString(html, 'text/html').getElementById('jobs-live');
            if (!next) return;
            live.innerHTML = next.innerHTML;
            if (next.getAttribute('data-refresh')) live.setAttribute('data-refresh', next.getAttribute('data-refresh'));
            else live.removeAttribute('data-refresh');
            refreshLive();
          })
          .catch(function () {
            refreshLive();
          });
      },
      Number(every) * 1000,
    );
  }
  refreshLive();

  // Copy buttons for a whole text: data-copy-text="#selector" (the element's text: the configuration view draws
  // its line numbers with CSS, so they are not part of it) or data-copy-url (a download fetched, e.g. a .patch).
  // Hidden in the page: shown only here, where they can work.
  function writeClipboard(text, btn) {
    var label = btn.textContent;
    var say = function (what) {
      btn.textContent = what;
      setTimeout(function () {
        btn.textContent = label;
      }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(
        function () {
          say('Copied');
        },
        function () {
          say('Copy failed');
        },
      );
      return;
    }
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = document.execCommand('copy');
    } catch (err) {
      ok = false;
    }
    document.body.removeChild(area);
    say(ok ? 'Copied' : 'Copy failed');
  }
  Array.prototype.forEach.call(document.querySelectorAll('[data-copy-text],[data-copy-url]'), function (btn) {
    btn.hidden = false;
    btn.addEventListener('click', function () {
      var sel = btn.getAttribute('data-copy-text');
      if (sel) {
        var el = document.querySelector(sel);
        if (el) writeClipboard(el.textContent, btn);
        return;
      }
      fetch(btn.getAttribute('data-copy-url'), { credentials: 'same-origin' })
        .then(function (r) {
          return r.text();
        })
        .then(
          function (t) {
            writeClipboard(t, btn);
          },
          function () {
            btn.textContent = 'Copy failed';
          },
        );
    });
  });

  // "Back up now": start through the internal API, show progress, then reload the page with the job's result.
  function poll(deviceId, jobId, status) {
    var started = Date.now();
    var tick = function () {
      fetch('/api/backup-jobs/' + encodeURIComponent(jobId), { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
        .then(function (r) {
          return r.json();
        })
        .then(function (j) {
          if (j.state === 'running') {
            status.className = 'job running';
            status.textContent = 'Backup running… ' + Math.round((Date.now() - started) / 1000) + ' s' + (j.progress ? ' (' + j.progress + ')' : '');
            setTimeout(tick, 1000);
          } else {
            window.location.assign('/devices/' + deviceId + '?job=' + encodeURIComponent(jobId));
          }
        })
        .catch(function () {
          setTimeout(tick, 2000);
        });
    };
    tick();
  }

  var form = document.querySelector('form[data-backup-now]');
  var status = document.getElementById('backup-status');
  if (form && status) {
    var deviceId = form.getAttribute('data-backup-now');
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      var button = form.querySelector('button');
      button.disabled = true;
      status.className = 'job running';
      status.textContent = 'Starting backup…';
      fetch('/api/devices/' + deviceId + '/backups', {
        method: 'POST',
        headers: { 'X-CSRF-Token': csrf, Accept: 'application/json' },
        credentials: 'same-origin',
      })
        .then(function (r) {
          return r.json().then(function (b) {
            return { ok: r.ok, body: b };
          });
        })
        .then(function (res) {
          if (!res.ok) {
            status.className = 'job failed';
            status.textContent = (res.body.error && res.body.error.message) || 'Could not start the backup';
            button.disabled = false;
            return;
          }
          poll(deviceId, res.body.id, status);
        })
        .catch(function () {
          status.className = 'job failed';
          status.textContent = 'Could not reach the appliance';
          button.disabled = false;
        });
    });
    // A page loaded while a job runs (no-script fallback, or a reload) keeps following it.
    var running = status.getAttribute('data-job');
    if (running) poll(deviceId, running, status);
  }
})();
