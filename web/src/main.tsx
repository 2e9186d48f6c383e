import "./style.css";
import { render } from "preact";
import { gatewayUrl } from "./api";
import { App } from "./app";

const root = document.getElementById("app");
if (root) {
  void gatewayUrl().then((url) => {
    root.textContent = ""; // the page's "Loading" line
    render(<App gateway={url} />, root);
  });
}
