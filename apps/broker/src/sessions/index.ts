// Sessions: the entity, the events a session's changes record, the activation and the reservation statement a create runs.
export { Session, type SessionStatus } from './session.entity';
export { sessionCreated } from './session-events';
export { activateWithEvent } from './session.repository';
export { RESERVE_SQL, SessionReservationRepository, reservationParameters, type ReservationInput } from './session-reservation.repository';
