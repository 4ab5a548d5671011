import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import type {
  McpServerAuth,
  McpSignInInput,
  TauriTavernMcpApi,
  TauriTavernMcpServer,
} from '../../../../jsapi/tauritavern-mcp';
import { apiError, discovery, installSillyTavern, server, strictActions, unexpected } from '../../../test/fakes';
import { currentPopup } from '../../../test/popup-double';
import { createManagerActions } from './actions';
import { englishTr } from '../../base/texts';
import { McpManagerApp, type McpManagerActions } from './McpManagerApp';
import { isAuthRequired, needsSignIn } from './ServerAuth';

const REDIRECT = 'http://127.0.0.1:7878/oauth/callback';

function auth(patch: Partial<McpServerAuth> = {}): McpServerAuth {
  return { state: 'none', scopes: [], refreshable: false, redirectUri: REDIRECT, ...patch };
}

const required = auth({ state: 'required', challenge: { status: 401, scopes: ['files:read'], at: '2026-01-01T00:00:00Z' } });
const signedIn = auth({ state: 'signed_in', scopes: ['files:read', 'offline_access'], refreshable: true, expiresAt: '2026-01-01T01:00:00Z', authorizationServer: 'as.example' });

function renderManager(servers: TauriTavernMcpServer[], a: McpManagerActions) {
  render(<McpManagerApp initial={{ servers, storageIssues: [] }} actions={a} />);
}

describe('sign-in in the Manager', () => {
  test('a server that needs sign-in: the chip, Sign in (called at once, in the click), then discovery', async () => {
    const user = userEvent.setup();
    const calls: string[] = [];
    // Whether the click is being dispatched: popup blockers allow a window
    // only while the click's handlers run.
    let inClick = false;
    const enter = () => (inClick = true);
    const leave = () => (inClick = false);
    document.addEventListener('click', enter, true);
    window.addEventListener('click', leave);
    renderManager(
      [server('active', { auth: required })],
      strictActions({
        signIn: (s) => {
          calls.push(`signIn ${s.id} ${inClick ? 'in the click' : 'after the click'}`);
          return Promise.resolve({ ...s, auth: signedIn });
        },
        signOut: () => unexpected('signOut'),
        refresh: (id) => {
          calls.push(`refresh ${id}`);
          return Promise.resolve(discovery());
        },
      }),
    );
    expect(screen.getByText('Needs sign-in')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Signed in')).toBeTruthy();
    await waitFor(() => expect(calls).toEqual([`signIn ${server().id} in the click`, `refresh ${server().id}`]));
    document.removeEventListener('click', enter, true);
    window.removeEventListener('click', leave);
    const chip = screen.getByText('Signed in');
    expect(chip.title).toContain('Scopes: files:read offline_access');
    expect(chip.title).toContain('Renewed automatically');
    expect(screen.queryByRole('button', { name: 'Sign in' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Sign out' })).toBeTruthy();
  });

  test('discovery refused for want of sign-in: the row says so and offers Sign in', async () => {
    const user = userEvent.setup();
    renderManager(
      [server('active', { auth: auth() })],
      strictActions({
        discover: () => Promise.reject(apiError('mcp.auth_required', 'the server requires authorization (HTTP 401)', 'Unavailable')),
        signIn: () => unexpected('signIn'),
        signOut: () => unexpected('signOut'),
      }),
    );
    expect(screen.queryByText('Needs sign-in')).toBeNull(); // never asked so far
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect(await screen.findByText('This server asks you to sign in before it can be used.')).toBeTruthy();
    expect(screen.getByText('Needs sign-in')).toBeTruthy();
    expect(screen.getByRole('alert').textContent).toContain('mcp.auth_required');
    expect(screen.getAllByRole('button', { name: 'Sign in' })).toHaveLength(2); // the row's and the notice's
  });

  test('a refresh refused for want of sign-in while the tools are known: the notice there too', async () => {
    const user = userEvent.setup();
    renderManager(
      [server('active', { auth: signedIn })],
      strictActions({
        discover: () => Promise.resolve(discovery()),
        refresh: () => Promise.reject(apiError('mcp.auth_required', 'the sign-in to this server has expired', 'Unavailable')),
        signIn: () => unexpected('signIn'),
        signOut: () => unexpected('signOut'),
      }),
    );
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await user.click(await screen.findByRole('button', { name: 'Refresh tools' }));
    expect(await screen.findByText('This server asks you to sign in before it can be used.')).toBeTruthy();
    expect(screen.getByRole('alert').textContent).toContain('mcp.auth_required');
    expect(screen.getByRole('button', { name: 'Refresh tools' })).toBeTruthy(); // the tools stay in view
  });

  test('a failed sign-in shows why and keeps Sign in', async () => {
    const user = userEvent.setup();
    renderManager(
      [server('active', { auth: required })],
      strictActions({
        signIn: () => Promise.reject(apiError('mcp.auth_denied', 'the authorization was refused (access_denied)', 'Conflict')),
        signOut: () => unexpected('signOut'),
      }),
    );
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toContain('mcp.auth_denied');
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeTruthy();
  });

  test('opened at a LAN address over plain http: the notice says the sign-in may be refused and what works; the refusal is shown with its code', async () => {
    const user = userEvent.setup();
    const lan = 'http://192.0.2.2:8000/api/plugins/ttmcp/oauth/callback';
    renderManager(
      [server('active', { auth: auth({ redirectUri: lan }) })],
      strictActions({
        discover: () => Promise.reject(apiError('mcp.auth_required', 'the server requires authorization (HTTP 401)', 'Unavailable')),
        signIn: () =>
          Promise.reject(
            apiError('mcp.auth_redirect_refused', `the authorization server refuses to send you back to ${lan}: OAuth servers accept plain http only on localhost. Open SillyTavern over https`, 'Unavailable'),
          ),
        signOut: () => unexpected('signOut'),
      }),
    );
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    const hint = await screen.findByText(/This page is open at http:\/\/192\.0\.2\.2:8000 over plain http/);
    expect(hint.textContent).toContain('open SillyTavern over https');
    await user.click(screen.getAllByRole('button', { name: 'Sign in' })[0]!);
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('mcp.auth_redirect_refused'));
    expect(screen.getByRole('alert').textContent).toContain('Open SillyTavern over https');
  });

  test('on loopback or https there is no such note', async () => {
    const user = userEvent.setup();
    for (const redirectUri of [REDIRECT, 'http://localhost:8000/api/plugins/ttmcp/oauth/callback', 'https://st.example/api/plugins/ttmcp/oauth/callback']) {
      const { unmount } = render(
        <McpManagerApp
          initial={{ servers: [server('active', { auth: auth({ redirectUri }) })], storageIssues: [] }}
          actions={strictActions({
            discover: () => Promise.reject(apiError('mcp.auth_required', 'the server requires authorization (HTTP 401)', 'Unavailable')),
            signIn: () => unexpected('signIn'),
            signOut: () => unexpected('signOut'),
          })}
        />,
      );
      await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
      await screen.findByText('This server asks you to sign in before it can be used.');
      expect(screen.queryByText(/over plain http/)).toBeNull();
      unmount();
    }
  });

  test('a refusal that ended the sign-in at the backend: the chip follows the backend (discovery, the test console)', async () => {
    const user = userEvent.setup();
    // The backend's states, one per list: after the discovery, the
    // sign-in still holds (a refresh token); after the test console, it
    // is over (the refresh was refused).
    const states = [auth({ ...signedIn, challenge: { status: 401, error: 'invalid_token', scopes: [], at: '2026-01-01T00:00:00Z' } }), required];
    const lists: string[] = [];
    renderManager(
      [server('active', { auth: signedIn })],
      strictActions({
        discover: () => Promise.reject(apiError('mcp.auth_required', 'the server requires authorization (HTTP 401, invalid_token)', 'Unavailable')),
        openTestCall: () => Promise.resolve(),
        list: () => {
          lists.push('list');
          return Promise.resolve({ servers: [server('active', { auth: states[lists.length - 1] })], storageIssues: [] });
        },
        signIn: () => unexpected('signIn'),
        signOut: () => unexpected('signOut'),
      }),
    );
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect(await screen.findByText('This server asks you to sign in before it can be used.')).toBeTruthy();
    await waitFor(() => expect(lists).toHaveLength(1));
    expect(screen.getByText('Signed in')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Test call' }));
    expect(await screen.findByText('Needs sign-in')).toBeTruthy();
    expect(screen.queryByText('Signed in')).toBeNull();
    expect(lists).toHaveLength(2);
  });

  test('Sign out forgets the sign-in', async () => {
    const user = userEvent.setup();
    const outs: string[] = [];
    renderManager(
      [server('active', { auth: signedIn })],
      strictActions({
        signIn: () => unexpected('signIn'),
        signOut: (id) => {
          outs.push(id);
          return Promise.resolve(server('active', { auth: auth() }));
        },
      }),
    );
    await user.click(screen.getByRole('button', { name: 'Sign out' }));
    await waitFor(() => expect(screen.queryByText('Signed in')).toBeNull());
    expect(outs).toEqual([server().id]);
    expect(screen.queryByRole('button', { name: 'Sign out' })).toBeNull();
  });

  test('without sign-in in the host API (TauriTavern) there are no sign-in buttons', () => {
    renderManager([server('active', { auth: required })], strictActions());
    expect(screen.getByText('Needs sign-in')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Sign in' })).toBeNull();
  });

  test('helpers', () => {
    expect(isAuthRequired('mcp.auth_required: x')).toBe(true);
    expect(isAuthRequired('mcp.auth_refresh_failed: x')).toBe(false);
    expect(needsSignIn(auth({ state: 'signed_in', challenge: { status: 403, error: 'insufficient_scope', scopes: ['w'], at: '' } }))).toBe(true);
    expect(needsSignIn(signedIn)).toBe(false);
    expect(needsSignIn(undefined)).toBe(false);
  });
});

describe('the host actions', () => {
  test('an authorization server without dynamic registration: the client dialog, then sign-in with the client', async () => {
    installSillyTavern();
    const user = userEvent.setup();
    const inputs: Array<string | McpSignInInput> = [];
    const s = server('active', { auth: required });
    const api = {
      servers: {
        signIn: (input: string | McpSignInInput) => {
          inputs.push(input);
          return inputs.length === 1
            ? Promise.reject(apiError('mcp.auth_client_required', 'the authorization server offers no dynamic client registration', 'Unavailable'))
            : Promise.resolve({ ...s, auth: signedIn });
        },
        signOut: () => unexpected('signOut'),
      },
      tools: {},
    } as unknown as TauriTavernMcpApi;
    const a = createManagerActions(api, englishTr);
    const signing = a.signIn!(s);
    const popup = await waitFor(() => currentPopup());
    expect(within(popup.dlg).getByDisplayValue(REDIRECT)).toBeTruthy();
    await user.click(popup.buttonNamed('Sign in')); // no client ID yet: stays open
    expect(popup.closed).toBe(false);
    await user.type(within(popup.dlg).getByLabelText('Client ID'), 'my-client');
    await user.type(within(popup.dlg).getByLabelText('Client secret (optional)'), 's3cret');
    await user.click(popup.buttonNamed('Sign in'));
    expect((await signing)?.auth?.state).toBe('signed_in');
    expect(inputs).toEqual([s.id, { registrationId: s.id, clientId: 'my-client', clientSecret: 's3cret' }]);
  });

  test('no sign-in actions when the host API has none', () => {
    const a = createManagerActions({ servers: {}, tools: {} } as unknown as TauriTavernMcpApi, englishTr);
    expect(a.signIn).toBeUndefined();
    expect(a.signOut).toBeUndefined();
  });
});
