// main.tsx: the entry point: narrows the page's connections to the bundle's origin (csp.ts), then
// mounts <App/> into index.html's #root.
import { restrictConnections } from './csp';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import './styles.css';

restrictConnections(); // before anything fetches

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(<StrictMode><App /></StrictMode>);
