/** Hands `text` to the browser as a file download named `name`; nothing leaves the page. */
export const saveFile = (name: string, text: string, type = "text/plain") => {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
};
