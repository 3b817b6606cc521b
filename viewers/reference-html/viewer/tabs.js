// tabs.js: the tab bar never hides a tab. The tabs that do not fit the bar's width move into a
// "More ▾" menu at its end (a disclosure button and a list of links: Tab, Enter and Esc work), and
// come back when the window widens.

import { h } from './dom.js';

/**
 * Fills `nav` with `links` (<a> elements, the active one with class 'active') and keeps them
 * fitted: on every resize of the bar, the ones past its width go into the menu.
 */
export function fillTabs(nav, links) {
  const m = menuOf(nav);
  nav.replaceChildren(...links, m.more);
  m.links = links;
  m.fit();
}

/** The nav's menu, made once: its button, list, and the resize observer that refits the bar. */
const menus = new WeakMap();
function menuOf(nav) {
  if (menus.has(nav)) return menus.get(nav);
  const menu = h('div', { class: 'tab-menu', id: 'tab-more-menu', role: 'menu', hidden: true });
  const button = h('button', {
    type: 'button', class: 'tab-more', 'aria-haspopup': 'true', 'aria-expanded': 'false', 'aria-controls': 'tab-more-menu',
    on: { click: () => setOpen(menu.hidden) },
  }, 'More ▾');
  const more = h('div', { class: 'tab-more-wrap' }, button, menu);
  function setOpen(open) {
    menu.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
    if (open) menu.querySelector('a')?.focus();
  }
  menu.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { setOpen(false); button.focus(); e.stopPropagation(); }
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      // Arrow keys walk the menu's items, as in any menu.
      const items = [...menu.querySelectorAll('a')];
      const i = items.indexOf(document.activeElement);
      items[(i + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length]?.focus();
      e.preventDefault();
      e.stopPropagation();
    }
  });
  menu.addEventListener('click', (e) => { if (e.target.closest('a')) setOpen(false); });
  document.addEventListener('click', (e) => { if (!more.contains(e.target)) setOpen(false); }, { capture: true });
  const m = { more, links: [], fit: () => fitTabs(nav, m.links, more, menu, button), close: () => setOpen(false) };
  new ResizeObserver(() => m.fit()).observe(nav);
  menus.set(nav, m);
  return m;
}

/** Shows the tabs that fit, the rest as menu items; the button shows whether the active tab is in it. */
function fitTabs(nav, links, more, menu, button) {
  for (const a of links) a.hidden = false;
  more.hidden = true;
  const style = getComputedStyle(nav);
  const room = nav.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const left = nav.getBoundingClientRect().left + nav.clientLeft + parseFloat(style.paddingLeft);
  const ends = links.map((a) => a.getBoundingClientRect().right - left);
  if (!links.length || ends.at(-1) <= room) {
    menu.replaceChildren();
    return;
  }
  more.hidden = false;
  button.textContent = 'More (99) ▾'; // its widest label, measured before choosing
  const roomLeft = room - more.offsetWidth - 8;
  const hidden = links.filter((a, i) => ends[i] > roomLeft);
  for (const a of hidden) a.hidden = true;
  // Copies of the hidden tabs: their hrefs only (routes made by app.js), labels as text.
  menu.replaceChildren(...hidden.map((a) => h('a', {
    href: a.getAttribute('href'), role: 'menuitem', class: a.classList.contains('active') ? 'active' : null,
    'aria-current': a.classList.contains('active') ? 'page' : null,
  }, a.textContent)));
  button.classList.toggle('active', hidden.some((a) => a.classList.contains('active')));
  button.textContent = `More (${hidden.length}) ▾`;
}
