// Every test starts from an empty page: no SillyTavern, no host API, no popups.
import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';
import { TestPopup } from './popup-double';

afterEach(() => {
  cleanup();
  TestPopup.reset();
  delete (globalThis as { SillyTavern?: unknown }).SillyTavern;
  delete (window as { __TAURITAVERN__?: unknown }).__TAURITAVERN__;
  delete (window as { __TAURITAVERN_MAIN_READY__?: unknown }).__TAURITAVERN_MAIN_READY__;
  document.body.innerHTML = '';
});
