/** Injection token of the simulator's `SimulatorConfig`. */
export const SIM_CONFIG = Symbol('SIM_CONFIG');
