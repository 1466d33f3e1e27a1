export default function Collection(_props: Record<string, string>) {
  return <main className="centered">Collection</main>;
}
