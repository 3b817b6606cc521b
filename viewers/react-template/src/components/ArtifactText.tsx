// ArtifactText.tsx: one artifact's text (graph, generated code, JSON...), fetched through the loader
// and shown as plain text: React escapes it, so code full of `<script>` stays text.
import type { Bundle } from '../bundle';
import { useAsync } from '../useAsync';
import { ErrorBox, Loading } from './Status';

interface ArtifactTextProps {
  bundle: Bundle;
  stream: string;
  compileId: string;
  name: string;
  nth: number;
}

export function ArtifactText({ bundle, stream, compileId, name, nth }: ArtifactTextProps) {
  const key = `${bundle.base} ${stream} ${compileId} ${name} ${nth}`;
  const text = useAsync(key, () => bundle.artifact(stream, compileId, name, nth));
  if (text.status === 'loading') return <Loading what={name} />;
  if (text.status === 'error') return <ErrorBox title={`Could not read ${name}`} error={text.error} />;
  return <TextBlock title={name} text={text.value} />;
}

/** A titled `<pre>` of text; null text means the artifact does not exist. */
export function TextBlock({ title, text }: { title: string; text: string | null }) {
  return (
    <section className="artifact-text" aria-label={`Artifact ${title}`}>
      <h3>{title}</h3>
      {text === null && <p>No such artifact.</p>}
      {text === '' && <p>(empty: logged without a payload)</p>}
      {text && <pre>{text}</pre>}
    </section>
  );
}
