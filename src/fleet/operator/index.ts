/** The operator side of the fleet link: `qrvend fleet status|watch|cmd` and the fleet simulation. */
export * from './connection.js';
export * from './decode.js';
export * from './fleet-view.js';
export * from './format.js';
export * from './status.js';
export * from './watch.js';
export * from './command.js';
