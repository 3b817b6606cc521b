// pages/graph-breaks.js: Graph breaks (not written yet).

import { h, empty } from '../dom.js';

export async function render() {
  return h('div', null, h('h1', null, 'Graph breaks'), empty('This page is not written yet.'));
}
