// local-folder.js: opening a bundle folder from this computer, read entirely in the page (the
// loader's openBundleFromFiles; nothing is uploaded): a folder picker, a drop zone, and drops
// anywhere on the window. For a viewer hosted without a bundle (GitHub Pages, a CDN), or to look
// at another bundle than the one served. File and folder names are text, never HTML (dom.js).

import { filesFromDataTransfer } from './bundle-loader.js';
import { h } from './dom.js';

/**
 * "Open a bundle folder…": a label styled as a button around a folder input
 * (`webkitdirectory`), so the native picker opens without script. Calls `onFiles(File[])` with the folder's files.
 */
export function folderPicker(onFiles, { label = 'Open a bundle folder…', compact = false } = {}) {
  const input = h('input', {
    type: 'file', webkitdirectory: true, multiple: true, class: 'visually-hidden', 'aria-label': 'Bundle folder',
    on: {
      change: () => {
        const files = [...input.files];
        input.value = ''; // picking the same folder again still fires `change`
        if (files.length) onFiles(files);
      },
    },
  });
  return h('label', { class: ['folder-picker', compact && 'compact'], title: 'Open a bundle folder from this computer' },
    input, label);
}

/**
 * The start panel for a page with no bundle: what a bundle is, the picker, and a zone to drop the
 * folder on. `status`: a line or an element (an error box) shown above the zone.
 */
export function dropZonePanel(onFiles, status) {
  return h('section', { class: 'open-folder', 'aria-label': 'Open a bundle folder' },
    h('h1', null, 'Open a bundle'),
    typeof status === 'string' ? h('p', { class: 'note' }, status) : status,
    h('div', { class: 'drop-zone', dataset: { dropZone: '' } },
      h('p', { class: 'drop-title' }, 'Drop a bundle folder here'),
      h('p', { class: 'note' }, 'the folder tlparse-build TRACE -o FOLDER wrote (it holds manifest.json), or a folder holding it'),
      folderPicker(onFiles)),
    h('p', { class: 'note' },
      'The files are read by this page in your browser and never sent anywhere. Your browser may ' +
      'ask to "upload" them: it means only that this page may read them.'),
    h('p', { class: 'note' }, 'To view a bundle on the web instead, serve its folder with ',
      h('code', null, 'tlparse-build serve FOLDER'), ', or add ', h('code', null, '?bundle=URL'), ' to this address.'));
}

/**
 * Lets the whole window take a dropped folder: while files are dragged over it, an overlay says
 * what dropping does; a drop calls `onFiles` with a promise of the dropped files (LocalFile[]). Drags of text or links are left alone.
 */
export function acceptDrops(onFiles) {
  const overlay = h('div', { class: 'drop-overlay', hidden: true, 'aria-hidden': 'true' },
    h('div', { class: 'drop-message' }, 'Drop the bundle folder to open it here',
      h('span', { class: 'note' }, 'read in your browser, never uploaded')));
  document.body.append(overlay);
  const carriesFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
  let depth = 0; // dragenter/dragleave pairs of nested elements: hide only when the drag leaves the window
  window.addEventListener('dragenter', (e) => {
    if (!carriesFiles(e)) return;
    depth++;
    overlay.hidden = false;
  });
  window.addEventListener('dragleave', (e) => {
    if (!carriesFiles(e)) return;
    if (--depth <= 0) { depth = 0; overlay.hidden = true; }
  });
  window.addEventListener('dragover', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault(); // else the browser opens the file itself
    e.dataTransfer.dropEffect = 'copy';
  });
  window.addEventListener('drop', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    depth = 0;
    overlay.hidden = true;
    // Read the items now: they are gone once this handler returns.
    onFiles(filesFromDataTransfer(e.dataTransfer));
  });
}
