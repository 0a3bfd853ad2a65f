export { twilioSid, uuidOfTwilioSid, type TwilioSidPrefix } from './twilio-sid';
