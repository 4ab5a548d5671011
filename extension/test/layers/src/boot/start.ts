import { alpha } from '../features/alpha/screen';
import { beta } from '../features/beta/panel';
export const start = alpha + beta;
