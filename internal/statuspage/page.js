(function () {
  var live = document.getElementById("live"), conn = document.getElementById("conn");
  function badge(text, cls) { conn.textContent = text; conn.className = "badge " + cls; }
  if (!window.EventSource) { setTimeout(function () { location.reload(); }, 5000); return; }
  var es = new EventSource("events" + location.search);
  es.addEventListener("status", function (e) { live.innerHTML = e.data; badge("live", "ok"); });
  es.onerror = function () { badge("reconnecting", "wait"); };
})();
