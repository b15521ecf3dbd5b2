// The three.js side of the package page's 3D viewer, imported by model-viewer.js on the first "View in 3D": a
// renderer in the panel's stage, orbit and zoom, a model parsed from its bytes (STL, 3MF, OBJ) and fitted to the
// view, its size in millimetres and its triangle count.
import * as THREE from "../vendor/three/build/three.module.js";
import { OrbitControls } from "../vendor/three/examples/jsm/controls/OrbitControls.js";
import { STLLoader } from "../vendor/three/examples/jsm/loaders/STLLoader.js";
import { ThreeMFLoader } from "../vendor/three/examples/jsm/loaders/3MFLoader.js";
import { OBJLoader } from "../vendor/three/examples/jsm/loaders/OBJLoader.js";

const MODEL_COLOUR = 0x635bf0; // the console's accent, a shade lighter so shading reads
const BACKGROUND = 0xeef0ff; // --accent-soft

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

// The viewer drawn into `stage`: {show(name, buffer) → facts, fit()}; null when the browser has no WebGL.
export function sceneMake(stage) {
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
  let shown = null;

  function fit() {
    if (!shown) return;
    const box = new THREE.Box3().setFromObject(shown);
    const sphere = box.getBoundingSphere(new THREE.Sphere());
    const distance = sphere.radius / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2));
    // From the front right, a little above: the angle of the rendered previews.
    const direction = new THREE.Vector3(0.55, 0.45, 0.7).normalize();
    // The bounding sphere overstates a model's outline: 0.8 of its distance fills the view with a margin.
    camera.position.copy(sphere.center).addScaledVector(direction, distance * 0.8);
    camera.near = distance / 100;
    camera.far = distance * 100;
    camera.updateProjectionMatrix();
    controls.target.copy(sphere.center);
    controls.update();
    draw();
  }

  function show(name, buffer) {
    const model = parsed(name, buffer); // throws on bytes that are no model: the caller says so
    model.rotation.x = -Math.PI / 2; // print models are Z up; the viewer's world is Y up
    if (shown) {
      scene.remove(shown);
      shown.traverse((node) => node.geometry && node.geometry.dispose());
    }
    shown = model;
    scene.add(model);
    fit();
    return facts(model);
  }

  return { show, fit };
}
