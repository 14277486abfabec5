// Accessibility of the bundled API reference (issue #25): a high-contrast light theme, and a script mending the ARIA of what it draws.
/**
 * The reference's light theme with colours that meet WCAG AA contrast (4.5:1) on its white and grey backgrounds: its
 * own greys, method colours and syntax colours are lighter than that.
 */
export const DOCS_CSS = `
.light-mode, .light-mode .scalar-app, :root {
  --scalar-color-1: #111827;
  --scalar-color-2: #374151;
  --scalar-color-3: #4b5563;
  --scalar-color-accent: #1d4ed8;
  --scalar-color-green: #166534;
  --scalar-color-blue: #1e40af;
  --scalar-color-orange: #9a3412;
  --scalar-color-red: #991b1b;
  --scalar-color-purple: #6b21a8;
  --scalar-color-yellow: #854d0e;
  --scalar-color-pink: #9d174d;
  --scalar-color-cyan: #155e75;
  --scalar-sidebar-color-1: #111827;
  --scalar-sidebar-color-2: #374151;
  --scalar-sidebar-search-color: #374151;
  --scalar-sidebar-color-active: #1e40af;
}
.dark-mode, .light-mode .dark-mode {
  --scalar-color-red: #ff8080;
  --scalar-color-orange: #ffb070;
  --scalar-color-green: #6ee7a0;
  --scalar-color-blue: #93c5fd;
  --scalar-color-purple: #d8b4fe;
  --scalar-color-yellow: #fde68a;
}
.sidebar-search-placeholder, .sidebar-heading-type, .badge, .hljs, .hljs * { opacity: 1 !important; }
.sidebar-heading-type { filter: none !important; }
`;

/**
 * Mends the reference's markup for assistive technology, as it renders and re-renders: a name for every button that
 * has only an icon, no search landmark role on a button, no aria-selected on plain buttons (aria-current instead), tabs
 * inside its tab list, no control nested in another button, the right name for its code editors, and keyboard focus
 * for code blocks and endpoint lists that scroll. Served from the appliance
 * (/api/v1/docs/a11y.js), so the page's CSP needs nothing new.
 */
export const DOCS_A11Y_SCRIPT = `(function () {
  'use strict';
  // The text a screen reader would read from the element's content (what aria-hidden hides does not count).
  function spoken(node) {
    if (node.nodeType === 3) return node.nodeValue;
    if (node.nodeType !== 1 || node.getAttribute('aria-hidden') === 'true') return '';
    if (node.getAttribute('aria-label')) return node.getAttribute('aria-label');
    var out = '';
    for (var c = node.firstChild; c; c = c.nextSibling) out += spoken(c);
    return out;
  }
  function nameless(el) {
    if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || el.getAttribute('title')) return false;
    // Rendered text only: a hidden "Copy" label does not name the button either.
    return !spoken(el).trim() || !(el.innerText || '').trim();
  }
  // A code editor is named by the label of the field it is the input of (the test client's header name, say), else
  // by its placeholder; only one that cannot be edited is an example value. (A wrong name sends typing elsewhere.)
  function nameEditor(el) {
    var field = el.parentElement && el.parentElement.closest('[id]');
    var label = field && document.querySelector('label[for="' + CSS.escape(field.id) + '"]');
    if (label) {
      if (!label.id) label.id = field.id + '-label';
      el.setAttribute('aria-labelledby', label.id);
      return;
    }
    var hint = el.querySelector('.cm-placeholder');
    var editable = el.getAttribute('contenteditable') === 'true' && el.getAttribute('aria-readonly') !== 'true';
    if (!editable) el.setAttribute('aria-label', 'Example value (read-only)');
    else if (hint && hint.textContent.trim()) el.setAttribute('aria-label', hint.textContent.trim());
    else el.setAttribute('aria-label', 'Value');
  }
  function mend(root) {
    var i, el, all;
    all = root.querySelectorAll('button[aria-selected]:not([role])');
    for (i = 0; i < all.length; i++) {
      el = all[i];
      if (el.getAttribute('aria-selected') === 'true') el.setAttribute('aria-current', 'true');
      else el.removeAttribute('aria-current');
      el.removeAttribute('aria-selected');
    }
    // A button is a button: the search landmark role takes its name away.
    all = root.querySelectorAll('button[role="search"]');
    for (i = 0; i < all.length; i++) all[i].removeAttribute('role');
    all = root.querySelectorAll('button');
    for (i = 0; i < all.length; i++) {
      el = all[i];
      if (!nameless(el)) continue;
      var cls = el.className && el.className.baseVal === undefined ? String(el.className) : '';
      el.setAttribute('aria-label', /copy/.test(cls) ? 'Copy code' : 'Show or hide details');
    }
    // A control inside a disclosure's button (the content-type menu of a response with more than one media type):
    // the button's part holding it stays (the viewer inserts before it) but its content moves into a twin just after
    // the button, in the same positioned list item, so it looks the same.
    all = root.querySelectorAll('button button, button a[href], button input, button select, button textarea');
    for (i = 0; i < all.length; i++) {
      el = all[i];
      var outer = el.parentElement && el.parentElement.closest('button');
      if (!outer || !outer.parentNode) continue;
      var part = el;
      while (part.parentElement !== outer) part = part.parentElement;
      if (part === el) continue;
      if (!part.a11yTwin || !part.a11yTwin.isConnected) {
        part.a11yTwin = part.cloneNode(false);
        part.a11yTwin.removeAttribute('id');
        outer.parentNode.insertBefore(part.a11yTwin, outer.nextSibling);
      }
      while (part.firstChild) part.a11yTwin.appendChild(part.firstChild);
    }
    all = root.querySelectorAll('[role="tablist"] button:not([role])');
    for (i = 0; i < all.length; i++) all[i].setAttribute('role', 'tab');
    all = root.querySelectorAll('.cm-content[role="textbox"]:not([aria-label]):not([aria-labelledby])');
    for (i = 0; i < all.length; i++) nameEditor(all[i]);
    all = root.querySelectorAll('pre > code:not([tabindex]), pre:not([tabindex])');
    for (i = 0; i < all.length; i++) if (all[i].scrollWidth > all[i].clientWidth + 1) all[i].setAttribute('tabindex', '0');
    // A group's list of endpoints scrolls on a phone (the compliance group's ten): the keyboard reaches it too.
    all = root.querySelectorAll('ul[aria-label]:not([tabindex])');
    for (i = 0; i < all.length; i++) if (all[i].scrollHeight > all[i].clientHeight + 1 || all[i].scrollWidth > all[i].clientWidth + 1) all[i].setAttribute('tabindex', '0');
  }
  var queued = false;
  function schedule() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(function () {
      queued = false;
      mend(document);
    });
  }
  new MutationObserver(schedule).observe(document.documentElement, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-selected'] });
  window.addEventListener('resize', schedule);
  schedule();
})();
`;
