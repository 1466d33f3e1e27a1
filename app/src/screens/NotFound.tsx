import { Link } from 'wouter';
import { appHref } from '../paths.ts';

export default function NotFound() {
  return (
    <main className="centered">
      <div className="card narrow">
        <h1>Not found</h1>
        <p>This page does not exist, or you do not have access to it.</p>
        <Link href={appHref('/')}>Go to your organizations</Link>
      </div>
    </main>
  );
}
