// The 3D viewer of the package page: a model file of the tree ("View in 3D") is read out of the kept archive
// through its signed link and shown with three.js (vendored under static/vendor/three, no outside request):
// orbit, zoom, fit, its size in millimetres and its triangle count. three.js (model-viewer-scene.js) is loaded
// on the first "View in 3D": a page nobody opens a model on does not download it. A large file says its size
// first and loads on request. Without WebGL the viewer says so; the file can still be fetched with "Get".
const LARGE_BYTES = 20 * 1024 * 1024; // above this a model loads only when asked: time, memory, data

const panel = document.getElementById("model-viewer");
const part = (name) => panel.querySelector(`[data-viewer-${name}]`);
let scene = null; // the promise of the three.js side, made on first use; it gives null without WebGL
let wanted = null; // the model the panel is about: {url, name, bytes}

function sizeText(bytes) {
  const units = ["bytes", "KB", "MB", "GB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit ? `${value.toFixed(1)} ${units[unit]}` : `${bytes} bytes`;
}

function status(text) {
  part("status").textContent = text;
}

function sceneLoaded() {
  if (!scene) {
    scene = import("./model-viewer-scene.js").then(
      (module) => module.sceneMake(part("stage")),
      (error) => {
        scene = null; // the next "View in 3D" tries again
        throw error;
      },
    );
  }
  return scene;
}

async function load() {
  const asked = wanted;
  part("load").hidden = true;
  status(`Reading ${asked.name} (${sizeText(asked.bytes)}) out of the archive…`);
  let buffer;
  try {
    const response = await fetch(asked.url, { headers: { Accept: "application/json" } });
    if (!response.ok) {
      const answer = await response.json().catch(() => ({}));
      throw new Error(answer.message || `The console answered ${response.status}.`);
    }
    buffer = await response.arrayBuffer();
  } catch (error) {
    if (wanted === asked) status(`${asked.name} could not be read: ${error.message}`);
    return;
  }
  if (wanted !== asked) return; // another model was asked for meanwhile
  try {
    part("facts").textContent = (await sceneLoaded()).show(asked.name, buffer);
  } catch (error) {
    status(`${asked.name} is not a model this viewer can read (${error.message}).`);
    return;
  }
  status("Drag to turn it, scroll or pinch to zoom, right-drag to move it.");
}

async function open(button) {
  const { modelUrl: url, modelName: name, modelBytes } = button.dataset;
  const asked = { url, name, bytes: Number(modelBytes) };
  wanted = asked;
  panel.hidden = false;
  part("name").textContent = asked.name;
  part("facts").textContent = "";
  status("Opening the 3D viewer…");
  let viewer;
  try {
    viewer = await sceneLoaded();
  } catch {
    if (wanted === asked) status("The 3D viewer could not be loaded: try again, or use “Get” for the file.");
    return;
  }
  if (wanted !== asked) return;
  if (!viewer) {
    status("This browser cannot show 3D models (WebGL is off or missing). Use “Get” to download the file.");
    return;
  }
  panel.scrollIntoView({ behavior: "smooth", block: "start" });
  if (asked.bytes > LARGE_BYTES) {
    status(`${asked.name} is ${sizeText(asked.bytes)}: loading it takes a while and a lot of memory.`);
    part("load").hidden = false;
    return;
  }
  load();
}

if (panel) {
  document.addEventListener("click", (event) => {
    const button = event.target.closest(".file-view");
    if (button) open(button);
  });
  part("load").addEventListener("click", load);
  part("fit").addEventListener("click", () => scene && scene.then((viewer) => viewer && viewer.fit()));
  part("close").addEventListener("click", () => {
    panel.hidden = true;
    wanted = null;
  });
  panel.dataset.ready = ""; // the buttons answer from here on; three.js comes with the first "View in 3D"
}
