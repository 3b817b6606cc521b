// BundlePicker.tsx: the URL box. Submitting it puts the URL in `?bundle=`, which opens the bundle.
import { type FormEvent } from 'react';
import { navigate } from '../route';

export function BundlePicker({ current }: { current: string | undefined }) {
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const url = new FormData(event.currentTarget).get('bundle');
    if (typeof url === 'string' && url.trim()) navigate({ bundle: url.trim() });
  };
  return (
    // `key` resets the box when the URL changes (Back, or a link to another bundle).
    <form className="bundle-picker" onSubmit={onSubmit} key={current}>
      <input
        name="bundle" type="text" defaultValue={current ?? ''} aria-label="Bundle URL"
        placeholder="URL of a bundle (the directory holding manifest.json)"
      />
      <button type="submit">Open</button>
    </form>
  );
}

/** Shown before a bundle is chosen. */
export function Welcome() {
  return (
    <section className="welcome">
      <h2>Open a bundle</h2>
      <p>
        Paste the URL of a tlparse bundle above (made by <code>tlparse-build TRACE -o OUT</code>
        and served over HTTP), or add <code>?bundle=URL</code> to this page's address.
        A bundle on another host must allow cross-origin requests (GitHub Pages does).
      </p>
    </section>
  );
}
