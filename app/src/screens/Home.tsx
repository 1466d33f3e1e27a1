export default function Home(_props: Record<string, string>) {
  return <main className="centered">Home</main>;
}
