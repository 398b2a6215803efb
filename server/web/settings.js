// The player's own settings for the table, kept in this browser (localStorage): a sound and
// a "● Your turn" tab title when it is their turn, and the four-colour deck (spades black,
// hearts red, diamonds blue, clubs green). The sound is made with WebAudio: no file to fetch.
import { el } from "./page.js";

const KEY = "stud.settings";
const DEFAULTS = { sound: false, titleAlert: true, fourColour: false };
const LABELS = {
  sound: "Sound on my turn",
  titleAlert: "“● Your turn” in the tab title",
  fourColour: "Four-colour deck",
};
export const TURN_TITLE = "● Your turn";

function load() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) || "{}");
    return Object.fromEntries(Object.entries(DEFAULTS).map(([k, v]) => [k, typeof saved[k] === "boolean" ? saved[k] : v]));
  } catch {
    return { ...DEFAULTS };
  }
}

export const settings = load();

function save() {
  try { localStorage.setItem(KEY, JSON.stringify(settings)); } catch { /* kept for this page only */ }
}

function applyDeck() {
  document.body.classList.toggle("four-colour", settings.fourColour);
}

// The settings area: one checkbox a setting, each saved as soon as it changes.
export function mountSettings(container) {
  const boxes = Object.keys(DEFAULTS).map((key) => {
    const input = el("input", { type: "checkbox", id: `setting-${key}`, dataSetting: key });
    input.checked = settings[key];
    input.addEventListener("change", () => {
      settings[key] = input.checked;
      save();
      if (key === "fourColour") applyDeck();
      if (key === "titleAlert" && !input.checked) turnOver();
    });
    return el("label", { class: "setting" }, input, " ", LABELS[key]);
  });
  container.replaceChildren(el("details", { class: "settings" }, el("summary", { text: "Settings" }), ...boxes));
  applyDeck();
}

let audio = null;

// A short two-note chime; browsers start audio only after the page was used (a click or a
// key), which a player at the table has done.
function chime() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  audio ??= new Context();
  const start = audio.currentTime + 0.01;
  for (const [i, freq] of [660, 880].entries()) {
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.type = "sine";
    osc.frequency.value = freq;
    const t0 = start + i * 0.14;
    gain.gain.setValueAtTime(0.0001, t0);
    gain.gain.exponentialRampToValueAtTime(0.2, t0 + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, t0 + 0.13);
    osc.connect(gain).connect(audio.destination);
    osc.start(t0);
    osc.stop(t0 + 0.14);
  }
  document.body.dataset.chimes = String(Number(document.body.dataset.chimes || 0) + 1);
}

let titleBefore = null;

// It is the player's turn (once a turn): the chime and the tab title, as set.
export function yourTurn() {
  if (settings.sound) {
    try { chime(); } catch { /* no sound on this browser */ }
  }
  if (settings.titleAlert && document.title !== TURN_TITLE) {
    titleBefore = document.title;
    document.title = TURN_TITLE;
  }
}

// The turn is over (acted, timed out, the hand ended): the title as it was.
export function turnOver() {
  if (titleBefore !== null && document.title === TURN_TITLE) document.title = titleBefore;
  titleBefore = null;
}

// Away from the table, no turn calls for the player.
window.addEventListener("hashchange", () => { if (!location.hash.startsWith("#/table/")) turnOver(); });
