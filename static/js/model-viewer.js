// The 3D viewer of the package page: a model file of the tree ("View in 3D") is read out of the kept archive
// through its signed link and shown with three.js (vendored under static/vendor/three, no outside request):
// orbit, zoom, fit, its size in millimetres and its triangle count. A large file says its size first and
// loads on request. Without WebGL the viewer says so; the file can still be fetched with "Get".
import * as THREE from "../vendor/three/build/three.module.js";
import { OrbitControls } from "../vendor/three/examples/jsm/controls/OrbitControls.js";
import { STLLoader } from "../vendor/three/examples/jsm/loaders/STLLoader.js";
import { ThreeMFLoader } from "../vendor/three/examples/jsm/loaders/3MFLoader.js";
import { OBJLoader } from "../vendor/three/examples/jsm/loaders/OBJLoader.js";

const LARGE_BYTES = 20 * 1024 * 1024; // above this a model loads only when asked: time, memory, data
const MODEL_COLOUR = 0x635bf0; // the console's accent, a shade lighter so shading reads
const BACKGROUND = 0xeef0ff; // --accent-soft

const panel = document.getElementById("model-viewer");
const part = (name) => panel.querySelector(`[data-viewer-${name}]`);
let viewer = null; // made on first use: a page that never opens a model pays nothing
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

function viewerMake() {
  const stage = part("stage");
  let renderer;
  try {
    renderer = new THREE.WebGLRenderer({ antialias: true });
  } catch {
    return null;
  }
  renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
  stage.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(BACKGROUND);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8088aa, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 2.2);
  sun.position.set(-1, 2, 1.5);
  scene.add(sun);
  const camera = new THREE.PerspectiveCamera(35, 1, 0.1, 100000);
  const controls = new OrbitControls(camera, renderer.domElement);
  const made = { renderer, scene, camera, controls, model: null };
  const draw = () => renderer.render(scene, camera);
  controls.addEventListener("change", draw);
  new ResizeObserver(() => {
    const width = stage.clientWidth;
    const height = Math.round(Math.min(width * 0.75, 480));
    renderer.setSize(width, height);
    camera.aspect = width / height;
    camera.updateProjectionMatrix();
    draw();
  }).observe(stage);
  made.draw = draw;
  return made;
}

function fit() {
  if (!viewer || !viewer.model) return;
  const box = new THREE.Box3().setFromObject(viewer.model);
  const sphere = box.getBoundingSphere(new THREE.Sphere());
  const distance = sphere.radius / Math.sin(THREE.MathUtils.degToRad(viewer.camera.fov / 2));
  // From the front right, a little above: the angle of the rendered previews.
  const direction = new THREE.Vector3(0.55, 0.45, 0.7).normalize();
  // The bounding sphere overstates a model's outline: 0.8 of its distance fills the view with a margin.
  viewer.camera.position.copy(sphere.center).addScaledVector(direction, distance * 0.8);
  viewer.camera.near = distance / 100;
  viewer.camera.far = distance * 100;
  viewer.camera.updateProjectionMatrix();
  viewer.controls.target.copy(sphere.center);
  viewer.controls.update();
  viewer.draw();
}

function parsed(name, buffer) {
  const lower = name.toLowerCase();
  const material = new THREE.MeshStandardMaterial({ color: MODEL_COLOUR, roughness: 0.6, metalness: 0.05 });
  if (lower.endsWith(".stl")) {
    const geometry = new STLLoader().parse(buffer);
    if (!geometry.getAttribute("normal")) geometry.computeVertexNormals();
    return new THREE.Mesh(geometry, material);
  }
  const group = lower.endsWith(".3mf")
    ? new ThreeMFLoader().parse(buffer)
    : new OBJLoader().parse(new TextDecoder().decode(buffer));
  group.traverse((node) => {
    if (node.isMesh) node.material = material;
  });
  return group;
}

function facts(model) {
  let triangles = 0;
  model.traverse((node) => {
    if (!node.isMesh) return;
    const geometry = node.geometry;
    triangles += (geometry.index ? geometry.index.count : geometry.getAttribute("position").count) / 3;
  });
  const size = new THREE.Box3().setFromObject(model).getSize(new THREE.Vector3());
  // Back in the file's own axes (Z up) for the reader: width × depth × height.
  const mm = [size.x, size.z, size.y].map((value) => value.toFixed(1)).join(" × ");
  return `${mm} mm · ${Math.round(triangles).toLocaleString("en")} triangles`;
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
  let model;
  try {
    model = parsed(asked.name, buffer);
  } catch (error) {
    status(`${asked.name} is not a model this viewer can read (${error.message}).`);
    return;
  }
  model.rotation.x = -Math.PI / 2; // print models are Z up; the viewer's world is Y up
  if (viewer.model) {
    viewer.scene.remove(viewer.model);
    viewer.model.traverse((node) => node.geometry && node.geometry.dispose());
  }
  viewer.model = model;
  viewer.scene.add(model);
  part("facts").textContent = facts(model);
  status("Drag to turn it, scroll or pinch to zoom, right-drag to move it.");
  fit();
}

function open(button) {
  wanted = { url: button.dataset.modelUrl, name: button.dataset.modelName, bytes: Number(button.dataset.modelBytes) };
  panel.hidden = false;
  part("name").textContent = wanted.name;
  part("facts").textContent = "";
  viewer = viewer || viewerMake();
  if (!viewer) {
    status("This browser cannot show 3D models (WebGL is off or missing). Use “Get” to download the file.");
    return;
  }
  panel.scrollIntoView({ behavior: "smooth", block: "start" });
  if (wanted.bytes > LARGE_BYTES) {
    status(`${wanted.name} is ${sizeText(wanted.bytes)}: loading it takes a while and a lot of memory.`);
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
  part("fit").addEventListener("click", fit);
  part("close").addEventListener("click", () => {
    panel.hidden = true;
    wanted = null;
  });
  panel.dataset.ready = ""; // the buttons answer from here on (three.js is loaded with this module)
}
