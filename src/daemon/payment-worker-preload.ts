/**
 * Runs before any other module of the payment worker is evaluated (payment-worker.ts imports it
 * first; ES modules are evaluated in import order): settings that must be in place before the
 * libraries load.
 */
import { installLazyListFormat } from './lazy-list-format.js';

// got's dependency builds Intl.ListFormat objects on load: defer them (about 4 MB of resident ICU data).
installLazyListFormat();
