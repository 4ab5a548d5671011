import { start } from './boot/start';
export default start;
