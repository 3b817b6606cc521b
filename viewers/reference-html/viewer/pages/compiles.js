// pages/compiles.js: Compiles (not written yet).

import { h, empty } from '../dom.js';

export async function render() {
  return h('div', null, h('h1', null, 'Compiles'), empty('This page is not written yet.'));
}
