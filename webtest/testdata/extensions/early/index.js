// Loads before the fixture (lower loading_order), whatever its name.
(globalThis.fixtureLog ??= []).push('early');
