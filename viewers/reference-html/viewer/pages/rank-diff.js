// pages/rank-diff.js: Rank diff (not written yet).

import { h, empty } from '../dom.js';

export async function render() {
  return h('div', null, h('h1', null, 'Rank diff'), empty('This page is not written yet.'));
}
