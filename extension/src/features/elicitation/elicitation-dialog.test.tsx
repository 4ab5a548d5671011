import { act, fireEvent, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, test } from 'vitest';
import type { McpElicitationRequest } from '../../../../jsapi/tauritavern-mcp';
import { installSillyTavern } from '../../../test/fakes';
import { TestPopup } from '../../../test/popup-double';
import { englishTr } from '../../base/texts';
import { askElicitation, urlTarget } from './elicitation-dialog';
import { collectContent, elicitationFields, localDateTime, rfc3339 } from '../../ui/schema-form';

/** Every kind of field the specification's requested-schema subset has. */
const everything = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', description: 'As on your badge', minLength: 2, maxLength: 20 },
    email: { type: 'string', title: 'E-mail', format: 'email' },
    site: { type: 'string', format: 'uri' },
    born: { type: 'string', format: 'date' },
    when: { type: 'string', format: 'date-time' },
    age: { type: 'integer', title: 'Age', minimum: 18, maximum: 130 },
    ratio: { type: 'number', minimum: 0.5 },
    agree: { type: 'boolean', title: 'I agree', default: true },
    newsletter: { type: 'boolean' },
    color: { type: 'string', enum: ['r', 'g'], enumNames: ['Red', 'Green'], default: 'g' },
    size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }, { const: 'l', title: 'Large' }] },
    plain: { type: 'string', enum: ['one', 'two'] },
    tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2, default: ['b'] },
    langs: { type: 'array', title: 'Languages', items: { anyOf: [{ const: 'go', title: 'Go' }, { const: 'ts', title: 'TypeScript' }] } },
  },
  required: ['name', 'age', 'tags'],
};

function request(patch: Partial<McpElicitationRequest> = {}): McpElicitationRequest {
  return {
    callId: 'c1',
    registrationId: 'r1',
    serverDisplayName: 'Greeter',
    nativeName: 'greet',
    source: 'test',
    mode: 'form',
    message: 'Who are you?',
    requestedSchema: everything,
    ...patch,
  };
}

async function shown(): Promise<TestPopup> {
  for (let i = 0; i < 50 && !TestPopup.current; i++) await act(() => new Promise((r) => setTimeout(r, 0)));
  if (!TestPopup.current) throw new Error('no popup shown');
  return TestPopup.current;
}

function ok(popup: TestPopup): HTMLElement {
  return popup.dlg.querySelector<HTMLElement>('.popup-button-ok')!;
}

beforeEach(() => {
  TestPopup.reset();
  installSillyTavern();
});

describe('a server’s question, form mode', () => {
  test('renders the schema: titles, formats as input types, bounds, required marks, defaults and nothing else filled', async () => {
    const pending = askElicitation(request(), { signal: new AbortController().signal }, englishTr);
    const popup = await shown();
    const body = within(popup.content);
    expect(body.getByRole('heading').textContent).toBe('Greeter asks you');
    expect(popup.content.querySelector('.tt-mcp-approval-facts')?.textContent).toBe('ServerGreeterToolgreetAsked duringyour test call');
    expect(body.getByText('Who are you?').className).toBe('tt-mcp-elicit-message');
    expect(body.getByText('What you enter goes to Greeter. Give it only what you would give this server.')).toBeTruthy();
    expect(popup.buttonNamed('Accept')).toBeTruthy();
    expect([...popup.dlg.querySelectorAll('.popup-controls [role="button"]')].map((b) => b.textContent)).toEqual(['Accept', 'Decline', 'Cancel']);

    const name = body.getByRole('textbox', { name: /Your name/ }) as HTMLInputElement;
    expect(name.required).toBe(true);
    expect(name.value).toBe('');
    expect(name.maxLength).toBe(20);
    expect(body.getByRole('textbox', { name: /Your name/, description: 'As on your badge Enter at least 2 characters. Enter at most 20 characters.' })).toBe(name);
    expect((body.getByLabelText('E-mail') as HTMLInputElement).type).toBe('email');
    expect((body.getByLabelText('site') as HTMLInputElement).type).toBe('url');
    expect((body.getByLabelText('born') as HTMLInputElement).type).toBe('date');
    expect((body.getByLabelText('when') as HTMLInputElement).type).toBe('datetime-local');
    const age = body.getByLabelText(/Age/) as HTMLInputElement;
    expect([age.inputMode, age.value, age.required]).toEqual(['numeric', '', true]);
    expect(body.getByText('Enter 18 or more. Enter 130 or less.')).toBeTruthy();
    expect((body.getByLabelText('ratio') as HTMLInputElement).inputMode).toBe('decimal');
    const agree = body.getByRole('radiogroup', { name: 'I agree' });
    expect(within(agree).getByRole('radio', { name: 'Yes' })).toHaveProperty('checked', true);
    const newsletter = body.getByRole('radiogroup', { name: 'newsletter' });
    expect(within(newsletter).getByRole('radio', { name: 'Not set' })).toHaveProperty('checked', true);
    const color = body.getByLabelText('color') as HTMLSelectElement;
    expect([...color.options].map((o) => o.text)).toEqual(['Not set', 'Red', 'Green']);
    expect(color.selectedOptions[0]?.text).toBe('Green');
    expect([...(body.getByLabelText('size') as HTMLSelectElement).options].map((o) => o.text)).toEqual(['Not set', 'Small', 'Large']);
    expect([...(body.getByLabelText('plain') as HTMLSelectElement).options].map((o) => o.text)).toEqual(['Not set', 'one', 'two']);
    const tags = body.getByRole('group', { name: /tags/ });
    expect(within(tags).getAllByRole('checkbox').map((c) => (c as HTMLInputElement).checked)).toEqual([false, true, false]);
    expect(body.getByText('Choose at least 1 option. Choose at most 2 options.')).toBeTruthy();
    const langs = body.getByRole('group', { name: 'Languages' });
    expect(within(langs).getAllByRole('checkbox').map((c) => c.closest('label')?.textContent)).toEqual(['Go', 'TypeScript']);
    // the required ones are marked
    expect([...popup.content.querySelectorAll('.tt-mcp-required')].map((m) => m.closest('.tt-mcp-field')?.querySelector('label, .tt-mcp-label')?.textContent)).toEqual([
      'Your name *',
      'Age *',
      'tags *',
    ]);
    await popup.close(null);
    expect(await pending).toEqual({ response: { action: 'cancel' }, values: expect.any(Object) as object });
  });

  test('Accept is unavailable until the form fits, refuses to close while it does not, and answers the typed values', async () => {
    const user = userEvent.setup();
    const pending = askElicitation(request(), { signal: new AbortController().signal }, englishTr);
    const popup = await shown();
    const body = within(popup.content);
    expect(ok(popup).getAttribute('aria-disabled')).toBe('true');
    // a click anyway: the popup stays, every field says what is wrong
    expect(await popup.close(1)).toBe(false);
    expect(body.getAllByText('Required').length).toBe(2);
    await user.type(body.getByRole('textbox', { name: /Your name/ }), 'O');
    await user.type(body.getByLabelText(/Age/), '17');
    expect(await popup.close(1)).toBe(false);
    expect(body.getByText('Enter at least 2 characters.', { selector: '.tt-mcp-field-error' })).toBeTruthy();
    expect(body.getByText('Enter 18 or more.', { selector: '.tt-mcp-field-error' })).toBeTruthy();
    expect(ok(popup).getAttribute('aria-disabled')).toBe('true');
    await user.type(body.getByRole('textbox', { name: /Your name/ }), 'cto');
    await user.clear(body.getByLabelText(/Age/));
    await user.type(body.getByLabelText(/Age/), '42');
    await user.click(within(body.getByRole('group', { name: /tags/ })).getByRole('checkbox', { name: 'c' }));
    await user.click(within(body.getByRole('group', { name: 'Languages' })).getByRole('checkbox', { name: 'TypeScript' }));
    await user.selectOptions(body.getByLabelText('size'), 'Large');
    await user.click(within(body.getByRole('radiogroup', { name: 'newsletter' })).getByRole('radio', { name: 'No' }));
    fireEvent.change(body.getByLabelText('ratio'), { target: { value: '0.75' } });
    expect(ok(popup).hasAttribute('aria-disabled')).toBe(false);
    expect(await popup.close(1)).toBe(true);
    const answer = await pending;
    expect(answer.response).toEqual({
      action: 'accept',
      content: { name: 'Octo', age: 42, ratio: 0.75, agree: true, newsletter: false, color: 'g', size: 'l', tags: ['b', 'c'], langs: ['ts'] },
    });
    expect(answer.values?.name).toBe('Octo');
  });

  test('Decline and Cancel answer without content; Escape is Cancel; the message is text, never HTML', async () => {
    const html = '<b>bold</b><img src="x" onerror="window.pwned=1">';
    for (const [result, action] of [[0, 'decline'], [2, 'cancel'], [null, 'cancel']] as const) {
      TestPopup.reset();
      const pending = askElicitation(request({ message: html, source: 'model' }), { signal: new AbortController().signal }, englishTr);
      const popup = await shown();
      expect(popup.content.querySelector('.tt-mcp-elicit-message')?.textContent).toBe(html);
      expect(popup.content.querySelector('b, img')).toBeNull();
      expect(popup.content.textContent).toContain('the model’s tool call');
      await popup.close(result);
      const answer = await pending;
      expect(answer.response).toEqual({ action });
    }
    expect((window as { pwned?: number }).pwned).toBeUndefined();
  });

  test('a withdrawn question closes its popup; a re-ask shows the backend’s reason with what was typed', async () => {
    const stop = new AbortController();
    const pending = askElicitation(request(), { signal: stop.signal }, englishTr);
    const popup = await shown();
    await act(async () => stop.abort());
    expect(popup.closed).toBe(true);
    expect((await pending).response).toEqual({ action: 'cancel' });

    TestPopup.reset();
    const again = askElicitation(
      request({ requestedSchema: { type: 'object', properties: { email: { type: 'string', format: 'email' } } }, error: 'email: expected an e-mail address' }),
      { signal: new AbortController().signal, values: { email: 'octo-at-example' } },
      englishTr,
    );
    const second = await shown();
    expect(within(second.content).getByRole('alert').textContent).toBe('Your answer was not accepted: email: expected an e-mail address. Correct it and accept again.');
    expect((within(second.content).getByLabelText('email') as HTMLInputElement).value).toBe('octo-at-example');
    await second.close(1);
    expect((await again).response).toEqual({ action: 'accept', content: { email: 'octo-at-example' } });
  });

  test('a question during the model’s call offers Stop generation (the modal popup hides SillyTavern’s Stop); a test call’s does not', async () => {
    const generation = new AbortController();
    let stops = 0;
    const stop = () => {
      stops++;
      generation.abort(); // what the bridge does on generation_stopped
    };
    const pending = askElicitation(request({ source: 'model' }), { signal: generation.signal, stop }, englishTr);
    const popup = await shown();
    const buttons = within(popup.dlg);
    expect(popup.content.textContent).toContain('Stop generation stops the reply and this tool call');
    await userEvent.type(buttons.getByLabelText(/^Your name/), 'Never sent');
    await act(async () => fireEvent.click(buttons.getByText('Stop generation')));
    expect(stops).toBe(1);
    expect(popup.closed).toBe(true);
    expect(await pending).toEqual({ response: { action: 'cancel' } });

    TestPopup.reset();
    const test = askElicitation(request(), { signal: new AbortController().signal, stop }, englishTr);
    const second = await shown();
    expect(within(second.dlg).queryByText('Stop generation')).toBeNull();
    expect(second.content.textContent).not.toContain('Stop generation');
    await second.close(2);
    expect((await test).response).toEqual({ action: 'cancel' });
    expect(stops).toBe(1);
  });

  test('a form without fields is a confirmation', async () => {
    const pending = askElicitation(request({ requestedSchema: { type: 'object', properties: {} } }), { signal: new AbortController().signal }, englishTr);
    const popup = await shown();
    expect(popup.content.textContent).toContain('The server asks only whether you accept.');
    expect(ok(popup).hasAttribute('aria-disabled')).toBe(false);
    await popup.close(1);
    expect((await pending).response).toEqual({ action: 'accept', content: {} });
  });

  test('a page without Popup cannot ask (the transport answers cancel)', async () => {
    installSillyTavern({ popup: false });
    await expect(askElicitation(request(), { signal: new AbortController().signal }, englishTr)).rejects.toThrow('SillyTavern Popup API is unavailable');
  });
});

describe('a server’s question, URL mode', () => {
  const url = 'https://user@pay.example:8443/checkout?id=1#top';

  test('shows the full URL with its host apart; opens it only on the click, then says the server goes on', async () => {
    const opened: string[] = [];
    const pending = askElicitation(request({ mode: 'url', url, message: 'Pay here', requestedSchema: undefined }), { signal: new AbortController().signal, open: (h) => opened.push(h) }, englishTr);
    const popup = await shown();
    const body = within(popup.content);
    expect(body.getByRole('heading').textContent).toBe('Greeter asks you to open a page');
    expect(popup.content.querySelector('.tt-mcp-elicit-host')?.textContent).toBe('pay.example:8443');
    expect(popup.content.querySelector('.tt-mcp-elicit-href')?.textContent).toBe(url);
    expect(body.getByText('Open page opens it in a new tab. Go there only if you trust pay.example:8443.')).toBeTruthy();
    expect([...popup.dlg.querySelectorAll('.popup-controls [role="button"]')].map((b) => b.textContent)).toEqual(['Open page', 'Decline', 'Cancel']);
    expect(opened).toEqual([]);
    await popup.close(1);
    expect(opened).toEqual([new URL(url).href]);
    expect((await pending).response).toEqual({ action: 'accept' });
    const note = await shown();
    expect(note.content.textContent).toBe('Continue on the pageThe page on pay.example:8443 opened in a new tab. Greeter continues once you are done there.');
    await note.close(1);
  });

  /** The popup shown after prev. */
  async function after(prev: TestPopup): Promise<TestPopup> {
    for (let i = 0; i < 50 && TestPopup.current === prev; i++) await act(() => new Promise((r) => setTimeout(r, 0)));
    if (TestPopup.current === prev) throw new Error('no further popup shown');
    return TestPopup.current!;
  }

  test('a call refused until the user is done on the page: it says so, and only Done after the page answers accept', async () => {
    const resend = request({ mode: 'url', url, message: 'Connect your account', requestedSchema: undefined, nativeName: 'files', resend: true });
    for (const [button, action] of [
      [1, 'accept'],
      [0, 'cancel'],
    ] as const) {
      TestPopup.reset();
      const opened: string[] = [];
      const pending = askElicitation(resend, { signal: new AbortController().signal, open: (h) => opened.push(h) }, englishTr);
      const popup = await shown();
      expect(popup.content.querySelector('.tt-mcp-elicit-resend')?.textContent).toBe(
        'Greeter did not run the tool: it needs you to finish on this page first. Once you are done there, the call is sent again.',
      );
      expect(popup.content.textContent).toContain('Decline, Cancel, Escape or closing this window: the call is not sent again, and Greeter’s refusal is its answer.');
      expect(popup.content.textContent).not.toContain('Your answer goes to'); // nothing is answered to the server
      await popup.close(1);
      expect(opened).toEqual([new URL(url).href]);
      const done = await after(popup);
      expect(done.content.textContent).toBe(
        'Continue on the pageThe page on pay.example:8443 opened in a new tab. When you are done there, press Done: the call goes to Greeter again. Some servers say when you are done; then this closes by itself.',
      );
      expect([...done.dlg.querySelectorAll('.popup-controls [role="button"]')].map((b) => b.textContent)).toEqual(['Done', 'Cancel']);
      let settled = false;
      void pending.then(() => (settled = true));
      await act(() => new Promise((r) => setTimeout(r, 0)));
      expect(settled).toBe(false); // opening the page is not yet being done there
      await done.close(button);
      expect((await pending).response).toEqual({ action });
    }
  });

  test('the server announcing the page done withdraws the Done popup', async () => {
    const stop = new AbortController();
    const pending = askElicitation(request({ mode: 'url', url, requestedSchema: undefined, resend: true }), { signal: stop.signal, open: () => {} }, englishTr);
    const popup = await shown();
    await popup.close(1);
    const done = await after(popup);
    stop.abort();
    expect((await pending).response).toEqual({ action: 'cancel' }); // withdrawn: nobody reads it
    expect(done.closed).toBe(true);
  });

  test('a URL that is not http(s) is shown and never opened', async () => {
    for (const [raw, text] of [
      ['javascript:alert(1)', 'This is not a web address (javascript:): it cannot be opened from here. Decline or cancel.'],
      ['not a url', 'This is not a valid address: it cannot be opened from here. Decline or cancel.'],
    ] as const) {
      TestPopup.reset();
      const opened: string[] = [];
      const pending = askElicitation(request({ mode: 'url', url: raw }), { signal: new AbortController().signal, open: (h) => opened.push(h) }, englishTr);
      const popup = await shown();
      expect(popup.content.querySelector('.tt-mcp-elicit-href')?.textContent).toBe(raw);
      expect(within(popup.content).getByRole('alert').textContent).toBe(text);
      expect(ok(popup).getAttribute('aria-disabled')).toBe('true');
      expect(await popup.close(1)).toBe(false);
      await popup.close(0);
      expect((await pending).response).toEqual({ action: 'decline' });
      expect(opened).toEqual([]);
    }
  });

  test('urlTarget', () => {
    expect(urlTarget('https://bank.example@evil.example/x')).toEqual({ kind: 'web', href: 'https://bank.example@evil.example/x', host: 'evil.example' });
    expect(urlTarget('https://bücher.example/')).toEqual({ kind: 'web', href: 'https://xn--bcher-kva.example/', host: 'xn--bcher-kva.example' });
    expect(urlTarget('file:///etc/passwd')).toEqual({ kind: 'other', scheme: 'file:' });
    expect(urlTarget(undefined)).toEqual({ kind: 'invalid' });
  });
});

describe('the answer from the form values', () => {
  test('types, bounds and required fields', () => {
    const fields = elicitationFields(everything);
    const base = { name: 'Octo', age: '42', tags: '"a"' };
    expect(collectContent(fields, base)).toEqual({ ok: true, content: { name: 'Octo', age: 42, tags: ['a'] } });
    expect(collectContent(fields, { ...base, age: '4.5', ratio: '0.1', tags: '"a"\n"b"\n"c"', name: 'x'.repeat(21) })).toEqual({
      ok: false,
      errors: {
        age: 'field_integer',
        ratio: { key: 'field_below', limit: 0.5 },
        tags: { key: 'field_too_many', count: 2 },
        name: { key: 'field_too_long', count: 20 },
      },
    });
    // code points, as JSON Schema counts: two emoji are two characters
    expect(collectContent(fields, { ...base, name: '😀😀' }).ok).toBe(true);
    expect(collectContent(fields, { ...base, ratio: '1e400' })).toEqual({ ok: false, errors: { ratio: 'field_number' } });
    // formats are the backend's to judge
    expect(collectContent(fields, { ...base, email: 'not an address' })).toEqual({ ok: true, content: { ...{ name: 'Octo', age: 42, tags: ['a'] }, email: 'not an address' } });
  });

  test('a date-time is shown in local time and sent as RFC 3339 with the local offset', () => {
    const local = localDateTime('2026-03-04T05:06:07Z');
    expect(local).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(new Date(rfc3339(local!)).toISOString()).toBe('2026-03-04T05:06:07.000Z');
    expect(rfc3339('2026-03-04T05:06')).toMatch(/^2026-03-04T05:06:00(Z|[+-]\d\d:\d\d)$/);
    expect(rfc3339('yesterday')).toBe('yesterday');
    expect(localDateTime('2026-03-04')).toBeUndefined();
    const [when] = elicitationFields({ type: 'object', properties: { when: { type: 'string', format: 'date-time', default: '2026-03-04T05:06:07Z' } } });
    expect(when?.initial).toBe(local);
  });
});
