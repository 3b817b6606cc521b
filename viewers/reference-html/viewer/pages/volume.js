// pages/volume.js: Log volume (not written yet).

import { h, empty } from '../dom.js';

export async function render() {
  return h('div', null, h('h1', null, 'Log volume'), empty('This page is not written yet.'));
}
