import { base } from '../../base/texts';
import { host } from '../../host/sillytavern';
import { kit } from '../../ui/kit';
export const alpha = base + host + kit;
