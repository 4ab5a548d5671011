// The translator reaches components through context, so presentational
// components stay free of the host: the entry point provides SillyTavern's
// translate, tests render with English.

import { createContext, useContext } from 'react';
import { englishTr, type Tr } from './texts';

export const TrContext = createContext<Tr>(englishTr);

export function useTr(): Tr {
  return useContext(TrContext);
}
