// BundlePicker.tsx: the URL box, and a folder picker and drop zone for a bundle on this computer.
// Submitting a URL puts it in `?bundle=`, which opens the bundle; a local folder is read in the
// page (tlparse-bundle-loader's openBundleFromFiles) and stands in `?bundle=` as `local:N/NAME`.
import { useState, type DragEvent, type FormEvent } from 'react';
import { filesFromDataTransfer, type LocalFile } from 'tlparse-bundle-loader';
import { localFolderName, openLocalFolder } from '../bundle';
import { navigate } from '../route';

/** Opens local files as a bundle and navigates to it; what went wrong is in `error`. */
function useLocalFolder() {
  const [error, setError] = useState<Error | null>(null);
  const [reading, setReading] = useState(false);
  const open = async (files: Iterable<File | LocalFile> | Promise<LocalFile[]>) => {
    setError(null);
    setReading(true);
    try {
      navigate({ bundle: await openLocalFolder(await files) });
    } catch (e) {
      setError(e instanceof Error ? e : new Error(String(e)));
    } finally {
      setReading(false);
    }
  };
  return { open, error, reading };
}

/** "Open folder…": a label around a folder input (webkitdirectory), so no script opens the picker. */
function FolderInput({ onFiles, label }: { onFiles: (files: File[]) => void; label: string }) {
  return (
    <label className="folder-picker">
      <input
        type="file" className="visually-hidden" aria-label="Bundle folder" multiple
        // React has no prop for webkitdirectory: set it on the element.
        ref={(input) => { input?.setAttribute('webkitdirectory', ''); }}
        onChange={(event) => {
          const files = [...(event.currentTarget.files ?? [])];
          event.currentTarget.value = ''; // the same folder can be picked again
          if (files.length) onFiles(files);
        }}
      />
      {label}
    </label>
  );
}

function LocalError({ error }: { error: Error | null }) {
  if (!error) return null;
  return (
    <div className="error" role="alert">
      <strong>This folder cannot be opened as a bundle</strong>
      <p>{error.message}</p>
    </div>
  );
}

export function BundlePicker({ current }: { current: string | undefined }) {
  const local = useLocalFolder();
  const folder = current === undefined ? null : localFolderName(current);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const url = new FormData(event.currentTarget).get('bundle');
    if (typeof url === 'string' && url.trim()) navigate({ bundle: url.trim() });
  };
  return (
    // `key` resets the box when the URL changes (Back, or a link to another bundle).
    <div className="bundle-picker-row">
      <form className="bundle-picker" onSubmit={onSubmit} key={current}>
        <input
          name="bundle" type="text" defaultValue={folder === null ? current ?? '' : ''} aria-label="Bundle URL"
          placeholder="URL of a bundle (the directory holding manifest.json)"
        />
        <button type="submit">Open</button>
      </form>
      <FolderInput onFiles={(files) => void local.open(files)} label={local.reading ? 'Reading…' : 'Open folder…'} />
      {folder !== null && (
        <span className="local-badge" title="Read from this computer by this page; nothing was uploaded. This page's address cannot reopen it after a reload.">
          local folder <b>{folder}</b>
        </span>
      )}
      <LocalError error={local.error} />
    </div>
  );
}

/** Shown before a bundle is chosen: the URL instructions and a zone to drop a bundle folder on. */
export function Welcome() {
  const local = useLocalFolder();
  const [hover, setHover] = useState(false);
  const carriesFiles = (event: DragEvent) => event.dataTransfer.types.includes('Files');
  const onDrop = (event: DragEvent) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    setHover(false);
    void local.open(filesFromDataTransfer(event.dataTransfer)); // reads the items before this handler returns
  };
  return (
    <section className="welcome">
      <h2>Open a bundle</h2>
      <div
        className={hover ? 'drop-zone hover' : 'drop-zone'}
        onDragOver={(event) => { if (carriesFiles(event)) { event.preventDefault(); setHover(true); } }}
        onDragLeave={() => setHover(false)}
        onDrop={onDrop}
      >
        <p><strong>Drop a bundle folder here</strong> (the folder holding manifest.json, or one holding it)</p>
        <FolderInput onFiles={(files) => void local.open(files)} label={local.reading ? 'Reading…' : 'Open a bundle folder…'} />
        <p className="hint">Read by this page in your browser, never uploaded (your browser may still ask to "upload" them).</p>
      </div>
      <LocalError error={local.error} />
      <p>
        Or paste the URL of a tlparse bundle above (made by <code>tlparse-build TRACE -o OUT</code>{' '}
        and served over HTTP), or add <code>?bundle=URL</code> to this page's address.
        A bundle on another host must allow cross-origin requests (GitHub Pages does).
      </p>
    </section>
  );
}
