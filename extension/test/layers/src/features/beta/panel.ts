import { kit } from '../../ui/kit';
export const beta = kit;
