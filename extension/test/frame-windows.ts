// happy-dom loads no iframe page, so a frame has no contentWindow: this
// gives each frame a window of its own (a stand-in object: only its
// identity matters to a postMessage transport), for the tests' lifetime.
import { afterAll, beforeAll } from 'vitest';

export function useFrameWindows(): void {
  const windows = new WeakMap<HTMLIFrameElement, Window>();
  const real = Object.getOwnPropertyDescriptor(HTMLIFrameElement.prototype, 'contentWindow');
  beforeAll(() => {
    Object.defineProperty(HTMLIFrameElement.prototype, 'contentWindow', {
      configurable: true,
      get(this: HTMLIFrameElement) {
        if (!windows.has(this)) windows.set(this, {} as Window);
        return windows.get(this);
      },
    });
  });
  afterAll(() => {
    if (real) Object.defineProperty(HTMLIFrameElement.prototype, 'contentWindow', real);
  });
}
