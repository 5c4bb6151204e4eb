import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Session } from './api';

export const SessionContext = createContext<Session | undefined>(undefined);

/** The signed-in key (organization, role, name); screens render only once it is known. */
export function useSession(): Session {
  return useContext(SessionContext)!;
}
