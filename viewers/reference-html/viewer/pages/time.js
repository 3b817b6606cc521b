// pages/time.js: Compile time (not written yet).

import { h, empty } from '../dom.js';

export async function render() {
  return h('div', null, h('h1', null, 'Compile time'), empty('This page is not written yet.'));
}
