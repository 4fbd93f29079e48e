import Magpie

/// The page at `/` with `--dev`: builds a signed URL from a form, shows the result beside the original, and lists
/// the metrics. Signing happens on the server (`POST /dev/sign`), so the key never reaches the browser.
enum DevelopmentPage {
    static let html = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Magpie serve</title>
        <style>
        body { font: 15px system-ui, sans-serif; margin: 2em; color: #222; }
        form { display: grid; grid-template-columns: 8em 1fr; gap: .5em; max-width: 48em; }
        input, select { font: inherit; padding: .2em; }
        #images { display: flex; gap: 2em; margin-top: 1.5em; align-items: flex-start; }
        figure { margin: 0; } img { max-width: 40vw; border: 1px solid #ccc; }
        code { word-break: break-all; } pre { background: #f4f4f4; padding: 1em; max-height: 20em; overflow: auto; }
        </style></head>
        <body>
        <h1>Magpie serve</h1>
        <form id="form">
          <label for="source">Source URL</label><input id="source" name="source" required>
          <label for="options">Options</label><input id="options" name="options" value="resize:512x512:fit">
          <label for="format">Format</label>
          <select id="format" name="format">
            <option>auto</option><option>jpeg</option><option>png</option><option>webp</option>
            <option>avif</option><option>gif</option><option>jxl</option>
          </select>
          <span></span><button type="submit">Build signed URL</button>
        </form>
        <p>Signed URL: <code id="url">–</code></p>
        <p id="status"></p>
        <div id="images">
          <figure><img id="original" alt="original"><figcaption>original</figcaption></figure>
          <figure><img id="result" alt="result"><figcaption id="caption">result</figcaption></figure>
        </div>
        <h2>Metrics</h2>
        <pre id="metrics">loading…</pre>
        <script>
        async function refreshMetrics() {
          const text = await (await fetch('/metrics')).text();
          document.getElementById('metrics').textContent =
            text.split('\\n').filter(l => l.startsWith('magpie_server_') && !l.includes('_bucket')).join('\\n');
        }
        document.getElementById('form').addEventListener('submit', async (event) => {
          event.preventDefault();
          const source = document.getElementById('source').value.trim();
          const options = document.getElementById('options').value.split('/').map(s => s.trim()).filter(s => s);
          const format = document.getElementById('format').value;
          options.push('format:' + format);
          const path = '/' + options.join('/') + '/plain/' + encodeURIComponent(source);
          const response = await fetch('/dev/sign', { method: 'POST', body: path });
          const signed = (await response.text()).trim();
          document.getElementById('url').textContent = signed;
          document.getElementById('original').src = source;
          const result = document.getElementById('result');
          const started = performance.now();
          const image = await fetch(signed);
          const blob = await image.blob();
          result.src = URL.createObjectURL(blob);
          document.getElementById('caption').textContent = 'result: ' + image.status + ', ' +
            (image.headers.get('content-type') || '') + ', ' + blob.size + ' bytes, ' +
            Math.round(performance.now() - started) + ' ms, cache ' + (image.headers.get('x-magpie-cache') || '-');
          document.getElementById('status').textContent = image.ok ? '' : 'error: ' + await blob.text();
          refreshMetrics();
        });
        // `/?source=…&options=…&format=…` fills the form and submits it: a headless browser can screenshot a result.
        const query = new URLSearchParams(location.search);
        for (const name of ['source', 'options', 'format']) {
          if (query.has(name)) document.getElementById(name).value = query.get(name);
        }
        if (query.has('source')) document.getElementById('form').requestSubmit(); else refreshMetrics();
        </script>
        </body></html>
        """
}

extension ImageServer {
    /// `path` (starting with `/`, without a signature) signed with the first key, or under `insecure` when the server
    /// has no key and accepts unsigned URLs. Only routed with the development page.
    func developmentSignature(for path: String) -> String {
        let path = path.hasPrefix("/") ? path : "/" + path
        if signer.isEmpty { return "/insecure" + path }
        return "/" + signer.signature(forPath: path) + path
    }
}
