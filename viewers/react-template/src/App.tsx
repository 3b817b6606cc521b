// App.tsx: the page layout and the router: which view the URL (route.ts) asks for.
//   no ?bundle=           → Welcome
//   ?bundle=              → overview, stream picker, compile list, compiles-per-frame chart
//   &compile=[0/1]        → that compile and its artifacts
//   &artifact=NAME(&nth=) → ...and that artifact's text
import { openBundleOnce, tableOf, type Bundle } from './bundle';
import { compileRows } from './data';
import { useRoute, type Route } from './route';
import { useAsync } from './useAsync';
import { BundlePicker, Welcome } from './components/BundlePicker';
import { CompileList } from './components/CompileList';
import { CompilePage } from './components/CompilePage';
import { Overview } from './components/Overview';
import { RecompilesChart } from './components/RecompilesChart';
import { ErrorBox, Loading } from './components/Status';
import { StreamPicker } from './components/StreamPicker';

export function App() {
  const route = useRoute();
  return (
    <div className="app">
      <header>
        <h1>tlparse bundle viewer</h1>
        <BundlePicker current={route.bundle} />
      </header>
      <main>{route.bundle ? <BundleView url={route.bundle} route={route} /> : <Welcome />}</main>
    </div>
  );
}

function BundleView({ url, route }: { url: string; route: Route }) {
  const opened = useAsync(url, () => openBundleOnce(url));
  if (opened.status === 'loading') return <Loading what="the bundle" />;
  if (opened.status === 'error') return <ErrorBox title="This bundle cannot be opened" error={opened.error} />;
  const bundle = opened.value;
  const streams = bundle.manifest.streams;
  const stream = streams.find((s) => s.id === route.stream)?.id ?? streams[0]?.id;
  if (stream === undefined) return <p>This bundle has no streams.</p>;
  return (
    <>
      <Overview bundle={bundle} bundleUrl={url} />
      <StreamPicker manifest={bundle.manifest} route={route} stream={stream} />
      {route.compile
        ? <CompilePage bundle={bundle} route={route} stream={stream} compileId={route.compile} />
        : <StreamPage bundle={bundle} route={route} stream={stream} />}
    </>
  );
}

/** A stream's compiles: the compiles-per-frame chart and the compile list. */
function StreamPage({ bundle, route, stream }: { bundle: Bundle; route: Route; stream: string }) {
  const directory = useAsync(`${bundle.base} ${stream}`, () => tableOf(bundle, stream, 'compile_directory'));
  if (directory.status === 'loading') return <Loading what="the compiles" />;
  if (directory.status === 'error') return <ErrorBox title="Could not read the compiles" error={directory.error} />;
  return (
    <div className="stream-page">
      <CompileList rows={compileRows(directory.value)} route={route} />
      <RecompilesChart directory={directory.value} route={route} />
    </div>
  );
}
