import { useEffect, useState } from "react";

/** The current time, refreshed every `everyMs`, for live countdowns. */
export const useNow = (everyMs = 1000) => {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
};
