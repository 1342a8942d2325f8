// Cauri's checkout page works without this script; where it runs, it only improves it:
// the attempt's outcome shown as soon as it is known (instead of the page's own refresh),
// and the operator of the number predicted as the customer types it. No data leaves for
// another site (the page's CSP: connect-src 'self').
(function () {
  "use strict";
  if (!window.fetch || !document.querySelector) {
    return;
  }

  function askJson(url) {
    return fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (answer) { return answer.ok ? answer.json() : null; });
  }

  // The waiting page: asked every 2 s; once final, the page shows the outcome.
  var waiting = document.querySelector("[data-status-url]");
  if (waiting) {
    var ask = function () {
      askJson(waiting.getAttribute("data-status-url"))
        .then(function (body) {
          if (body && body.status !== "pending") {
            window.location.reload();
          } else {
            window.setTimeout(ask, 2000);
          }
        })
        .catch(function () { window.setTimeout(ask, 4000); });
    };
    window.setTimeout(ask, 2000);
  }

  // The choice of a mode: the operator of the number typed, predicted, put first.
  var number = document.querySelector("[data-predict-url]");
  var said = document.getElementById("prediction");
  if (number && said) {
    var timer = null;
    var predicted = function (body) {
      var buttons = document.querySelectorAll("button.mode");
      var operator = body && body.operator;
      for (var i = 0; i < buttons.length; i += 1) {
        var hit = operator && buttons[i].value === operator;
        buttons[i].classList.toggle("predicted", !!hit);
        if (hit) {
          buttons[i].parentNode.insertBefore(buttons[i], buttons[i].parentNode.firstChild);
        }
      }
      said.textContent = operator ? said.getAttribute("data-likely") + " " + body.name : "";
    };
    number.addEventListener("input", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(function () {
        var typed = number.value.replace(/[^0-9+]/g, "");
        if (typed.length < 8) {
          predicted(null);
          return;
        }
        var url = number.getAttribute("data-predict-url") + "?phone_number=" +
          encodeURIComponent(typed) + "&country=" + encodeURIComponent(number.getAttribute("data-country"));
        askJson(url).then(predicted).catch(function () { predicted(null); });
      }, 300);
    });
  }
}());
