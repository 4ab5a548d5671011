// The extension's layers (docs/ARCHITECTURE.md, "The extension's layers"),
// checked by `make check`. From the bottom up:
//
//   base/                 texts, translation, errors, URL rules: imports nothing of src/
//   host/   ui/           the host adapters (SillyTavern, TauriTavern's API, the
//                         backend connection) and the UI kit: base/ only
//   features/<feature>/   one folder per feature: base/, host/, ui/ and its own folder
//   boot/                 the wiring of features to the host: anything
//   index.tsx             the entry: boot/
//
// jsapi/ (the page API's declarations and modules) and test/ (test doubles)
// lie outside src/ and may be imported from anywhere. A rule's name is what
// a failing `make check` prints.

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Two files that import each other (through any number of others) cannot be read, tested or moved apart.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'base-imports-nothing',
      severity: 'error',
      comment: 'base/ is the floor: texts, translation, errors and URL rules import no other folder of src/.',
      from: { path: '^src/base/' },
      to: { path: '^src/(host|ui|features|boot)/|^src/index' },
    },
    {
      name: 'host-imports-base-only',
      severity: 'error',
      comment: 'A host adapter (SillyTavern, TauriTavern\'s API, the backend) knows no screen and no feature: features are given the host, not the other way round.',
      from: { path: '^src/host/' },
      to: { path: '^src/(ui|features|boot)/|^src/index' },
    },
    {
      name: 'ui-imports-base-only',
      severity: 'error',
      comment: 'The UI kit is shared by every feature, so it knows none of them and no host adapter.',
      from: { path: '^src/ui/' },
      to: { path: '^src/(host|features|boot)/|^src/index' },
    },
    {
      name: 'features-apart',
      severity: 'error',
      comment: 'A feature does not import another feature: what it needs from one is a small interface it defines itself, which boot/ fills.',
      from: { path: '^src/features/([^/]+)/' },
      to: { path: '^src/features/', pathNot: '^src/features/$1/' },
    },
    {
      name: 'features-below-boot',
      severity: 'error',
      comment: 'boot/ wires the features to the host; a feature never reaches back up into the wiring.',
      from: { path: '^src/features/' },
      to: { path: '^src/boot/|^src/index' },
    },
    {
      name: 'boot-is-the-top',
      severity: 'error',
      comment: 'Only index.tsx imports boot/.',
      from: { path: '^src/', pathNot: '^src/(boot/|index)' },
      to: { path: '^src/index' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing is a typo the bundler would catch too late.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.d.ts', '.js', '.mjs'],
      // packages that name their entry points in "exports" (ext-apps' app-bridge)
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default'],
    },
  },
};
