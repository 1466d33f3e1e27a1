import { useSession } from '../session.tsx';
import { Dialog } from './Dialog.tsx';
import { SignInForm } from './SignInForm.tsx';

/** Over the screen when the session ends: nothing on it is lost, and unsaved edits save after signing in. */
export function SessionExpiredDialog() {
  const { session } = useSession();
  return (
    <Dialog title="Your session has ended" onClose={() => undefined} dismissable={false}>
      <p>Sign in again to go on. Your unsaved changes are kept and will be saved.</p>
      <SignInForm initialEmail={session?.user.email ?? ''} />
    </Dialog>
  );
}
